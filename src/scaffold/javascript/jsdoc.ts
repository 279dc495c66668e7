import type * as TsMorph from 'ts-morph';

type Ts = typeof TsMorph.ts;
type T = typeof TsMorph.ts;
type Node = TsMorph.ts.Node;
type TypeNode = TsMorph.ts.TypeNode;

/** Opens every comment this module writes, so transpile can fold it into the doc comment right above it. */
export const JSDOC_MARK = '*@__jsdoc__';

/**
 * A `before` transformer for ts.transpileModule that writes the TypeScript types the emitter is about to drop as
 * JSDoc, so the JavaScript scaffold keeps them for the user's editor and for `tsc --checkJs`:
 * interfaces and type aliases become `@typedef` (with `@property` lines carrying each member's doc), functions and
 * methods get `@template`/`@param`/`@returns`, typed variables and fields `@type`, casts `/** @type {T} *\/ (x)`,
 * `satisfies` `@satisfies`, classes `@template`/`@extends`/`@implements`, and parameter properties become fields
 * with their type. A name imported from another module is written `import('./x.js').Name` (the import itself is
 * dropped when only types used it). Every comment starts with JSDOC_MARK; transpile merges it into an adjacent
 * doc comment and removes the mark.
 */
export function jsdocTransformer(ts: Ts): TsMorph.ts.TransformerFactory<TsMorph.ts.SourceFile> {
  return (context) => (file) => new JsDocWriter(ts, context, file).run();
}

class JsDocWriter {
  private readonly factory: TsMorph.ts.NodeFactory;
  private readonly printer: TsMorph.ts.Printer;
  /** Local name → [module specifier, exported name] for named imports (`default` for a default import). */
  private readonly imported = new Map<string, [string, string]>();
  private readonly heritageTypedefs = new Set<string>();
  /** Imported with `import type` / `type X`: always dropped by the emitter. */
  private readonly typeOnly = new Set<string>();
  private valueNames: Set<string> | undefined;

  constructor(
    private readonly ts: T,
    private readonly context: TsMorph.ts.TransformationContext,
    private readonly file: TsMorph.ts.SourceFile,
  ) {
    this.factory = context.factory;
    this.printer = ts.createPrinter({ removeComments: true, newLine: ts.NewLineKind.LineFeed });
  }

  run(): TsMorph.ts.SourceFile {
    const ts = this.ts;
    for (const statement of this.file.statements) {
      if (!ts.isImportDeclaration(statement) || !ts.isStringLiteral(statement.moduleSpecifier)) continue;
      const specifier = statement.moduleSpecifier.text;
      const clause = statement.importClause;
      if (clause?.name) this.imported.set(clause.name.text, [specifier, 'default']);
      if (clause?.name && clause.isTypeOnly) this.typeOnly.add(clause.name.text);
      const named = clause?.namedBindings;
      if (named && ts.isNamedImports(named)) {
        for (const element of named.elements) {
          this.imported.set(element.name.text, [specifier, (element.propertyName ?? element.name).text]);
          if (clause.isTypeOnly || element.isTypeOnly) this.typeOnly.add(element.name.text);
        }
      }
    }
    const statements: TsMorph.ts.Statement[] = [];
    for (const statement of this.file.statements) {
      const replaced = this.visit(statement);
      if (replaced === undefined) continue;
      statements.push(...(Array.isArray(replaced) ? (replaced as TsMorph.ts.Statement[]) : [replaced as TsMorph.ts.Statement]));
    }
    return this.factory.updateSourceFile(this.file, statements);
  }

  private readonly visit = (node: Node): TsMorph.ts.VisitResult<Node> => {
    const ts = this.ts;
    const f = this.factory;
    if (ts.isInterfaceDeclaration(node)) return this.typedef(node, node.name.text, node.typeParameters, this.interfaceType(node), node.members, node.heritageClauses === undefined);
    if (ts.isTypeAliasDeclaration(node)) {
      const members = ts.isTypeLiteralNode(node.type) ? node.type.members : undefined;
      return this.typedef(node, node.name.text, node.typeParameters, this.typeText(node.type), members, true);
    }
    if (ts.isExportDeclaration(node) && node.moduleSpecifier && ts.isStringLiteral(node.moduleSpecifier) && node.exportClause && ts.isNamedExports(node.exportClause)) {
      // Types re-exported from another module: a typedef here, so `import('./index.js').Name` still names them.
      const specifier = node.moduleSpecifier.text;
      const types = node.exportClause.elements.filter((element) => node.isTypeOnly || element.isTypeOnly);
      if (types.length === 0) return node;
      const lines = types.map((element) => `@typedef {import(${quote(specifier)}).${(element.propertyName ?? element.name).text}} ${element.name.text}`);
      const values = node.exportClause.elements.filter((element) => !(node.isTypeOnly || element.isTypeOnly));
      const comment = this.comment(f.createNotEmittedStatement(node), lines);
      if (values.length === 0) return comment;
      return [comment, f.updateExportDeclaration(node, node.modifiers, false, f.updateNamedExports(node.exportClause, values), node.moduleSpecifier, node.attributes)];
    }
    if (ts.isVariableStatement(node)) return this.variableStatement(node);
    if (ts.isFunctionDeclaration(node) || ts.isMethodDeclaration(node) || ts.isConstructorDeclaration(node) || ts.isGetAccessorDeclaration(node) || ts.isSetAccessorDeclaration(node)) {
      if (!node.body) return ts.visitEachChild(node, this.visit, this.context);
      const tags = this.functionTags(node);
      return this.comment(ts.visitEachChild(node, this.visit, this.context), tags);
    }
    if (ts.isArrowFunction(node) || ts.isFunctionExpression(node)) {
      return this.comment(ts.visitEachChild(node, this.visit, this.context), this.functionTags(node));
    }
    if (ts.isClassDeclaration(node) || ts.isClassExpression(node)) {
      // @implements and @extends take a name, not import('…'): a typedef here gives an imported one its name.
      const names = (node.heritageClauses ?? []).flatMap((clause) => clause.types.flatMap((type) => (ts.isIdentifier(type.expression) ? [type.expression.text] : [])));
      const typedefs = names
        .filter((name) => this.imported.has(name) && !this.heritageTypedefs.has(name) && (this.typeOnly.has(name) || !this.valueUsed(name)))
        .map((name) => {
          this.heritageTypedefs.add(name);
          const [specifier, imported] = this.imported.get(name)!;
          return `@typedef {import(${quote(specifier)}).${imported}} ${name}`;
        });
      const declaration = this.classDeclaration(node);
      if (typedefs.length === 0 || !ts.isClassDeclaration(node)) return declaration;
      return [this.comment(f.createNotEmittedStatement(f.createEmptyStatement()), typedefs), declaration];
    }
    if (ts.isPropertyDeclaration(node) && node.type) {
      return this.comment(ts.visitEachChild(node, this.visit, this.context), [`@type {${this.typeText(node.type)}}`]);
    }
    if (ts.isAsExpression(node) || ts.isTypeAssertionExpression(node)) {
      const inner = ts.visitNode(node.expression, this.visit) as TsMorph.ts.Expression;
      const type = ts.isTypeReferenceNode(node.type) && ts.isIdentifier(node.type.typeName) && node.type.typeName.text === 'const' ? 'const' : this.typeText(node.type);
      return this.comment(f.createParenthesizedExpression(inner), [`@type {${type}}`]);
    }
    if (ts.isReturnStatement(node) || ts.isThrowStatement(node)) {
      // A comment that spans lines right after `return` would end the statement there (ASI): parenthesize.
      const expression = node.expression && (ts.visitNode(node.expression, this.visit) as TsMorph.ts.Expression);
      const wrapped = expression && (ts.getSyntheticLeadingComments(expression) ?? []).some((comment) => comment.text.includes('\n')) ? f.createParenthesizedExpression(expression) : expression;
      return ts.isReturnStatement(node) ? f.updateReturnStatement(node, wrapped) : f.updateThrowStatement(node, wrapped!);
    }
    if (ts.isNonNullExpression(node) && this.isEntityName(node.expression)) {
      // `x!`: JSDoc has no such operator; the cast says the same.
      const inner = ts.visitNode(node.expression, this.visit) as TsMorph.ts.Expression;
      return this.comment(f.createParenthesizedExpression(inner), [`@type {NonNullable<typeof ${this.expressionText(node.expression)}>}`]);
    }
    if (ts.isCallExpression(node) && node.typeArguments && this.isPgQuery(node.expression)) {
      // pg's `query<R>(…)` has overloads whose constraints R fails, so an instantiation would not check: its result.
      const args = node.typeArguments.map((arg) => this.typeText(arg)).join(', ');
      const visited = f.updateCallExpression(node, ts.visitNode(node.expression, this.visit) as TsMorph.ts.Expression, undefined, ts.visitNodes(node.arguments, this.visit) as TsMorph.ts.NodeArray<TsMorph.ts.Expression>);
      return this.comment(f.createParenthesizedExpression(visited), [`@type {Promise<import('pg').QueryResult<${args}>>}`]);
    }
    if (ts.isCallExpression(node) && node.typeArguments && this.isEntityName(node.expression)) {
      // `f<T>(…)`: the type arguments go, so the callee is cast to its instantiation, `(f)(…)` (which keeps `this`
      // for a method, and every overload).
      const args = node.typeArguments.map((arg) => this.typeText(arg)).join(', ');
      const callee = this.comment(f.createParenthesizedExpression(ts.visitNode(node.expression, this.visit) as TsMorph.ts.Expression), [
        `@type {typeof ${this.expressionText(node.expression)}<${args}>}`,
      ]);
      return f.updateCallExpression(node, callee, undefined, ts.visitNodes(node.arguments, this.visit) as TsMorph.ts.NodeArray<TsMorph.ts.Expression>);
    }
    if (ts.isNewExpression(node) && node.typeArguments && ts.isIdentifier(node.expression)) {
      const args = node.typeArguments.map((arg) => this.typeText(arg)).join(', ');
      const visited = ts.visitEachChild(node, this.visit, this.context);
      return this.comment(f.createParenthesizedExpression(visited), [`@type {${this.typeText(f.createTypeReferenceNode(node.expression.text))}<${args}>}`]);
    }
    if (ts.isPropertyAccessExpression(node) && ts.isParenthesizedExpression(node.expression) && ts.isBinaryExpression(node.expression.expression) && this.isCast(node.expression.expression.left)) {
      // `((x as T) ?? y).m`: prettier moves the cast comment over the whole `x ?? y` on a second pass (changing what
      // it casts); that operand keeps no type here, as before JSDoc.
      const binary = node.expression.expression;
      const left = this.stripped(binary.left);
      const updated = f.updateBinaryExpression(binary, left, binary.operatorToken, ts.visitNode(binary.right, this.visit) as TsMorph.ts.Expression);
      return f.updatePropertyAccessExpression(node, f.updateParenthesizedExpression(node.expression, updated), node.name);
    }
    if (ts.isParenthesizedExpression(node) && (ts.isAsExpression(node.expression) || ts.isTypeAssertionExpression(node.expression) || ts.isSatisfiesExpression(node.expression))) {
      // `(x as T)`: the cast brings its own parentheses.
      return ts.visitNode(node.expression, this.visit);
    }
    if (ts.isTypeOfExpression(node) && this.startsWithCast(node.expression)) {
      // `typeof (x as T)?.code`: prettier parenthesizes the operand of such a cast on a second pass only, so the
      // emitted file would not be in its own style; parenthesize it now.
      return f.updateTypeOfExpression(node, f.createParenthesizedExpression(ts.visitNode(node.expression, this.visit) as TsMorph.ts.Expression));
    }
    if (ts.isSatisfiesExpression(node)) {
      const inner = ts.visitNode(node.expression, this.visit) as TsMorph.ts.Expression;
      return this.comment(f.createParenthesizedExpression(inner), [`@satisfies {${this.typeText(node.type)}}`]);
    }
    return ts.visitEachChild(node, this.visit, this.context);
  };

  /** Whether a name is used outside types and imports (then its import stays and the name is taken). */
  private valueUsed(name: string): boolean {
    const ts = this.ts;
    if (!this.valueNames) {
      const names = new Set<string>();
      const walk = (node: Node): void => {
        if (ts.isImportDeclaration(node) || (ts.isExportDeclaration(node) && node.moduleSpecifier) || ts.isTypeNode(node) || ts.isInterfaceDeclaration(node) || ts.isTypeAliasDeclaration(node) || (ts.isHeritageClause(node) && node.token === ts.SyntaxKind.ImplementsKeyword)) return;
        if (ts.isIdentifier(node)) names.add(node.text);
        // `x.Name` and `{ Name: … }` name a property, not the import.
        if (ts.isPropertyAccessExpression(node)) return walk(node.expression);
        if (ts.isPropertyAssignment(node) && ts.isIdentifier(node.name)) return walk(node.initializer);
        ts.forEachChild(node, walk);
      };
      walk(this.file);
      this.valueNames = names;
    }
    return this.valueNames.has(name);
  }

  /** `x.query` in a file that imports pg, x not `this` (the store's own query helpers are not overloaded). */
  private isPgQuery(node: Node): boolean {
    const ts = this.ts;
    if (!ts.isPropertyAccessExpression(node) || node.name.text !== 'query' || node.expression.kind === ts.SyntaxKind.ThisKeyword) return false;
    return [...this.imported.values()].some(([specifier]) => specifier === 'pg');
  }

  /** The expression with its casts taken away and no JSDoc written into it (the emitter drops the types). */
  private stripped(node: TsMorph.ts.Expression): TsMorph.ts.Expression {
    const ts = this.ts;
    const strip = (child: Node): Node => {
      if (ts.isParenthesizedExpression(child) && (ts.isAsExpression(child.expression) || ts.isTypeAssertionExpression(child.expression) || ts.isSatisfiesExpression(child.expression))) {
        return this.factory.createParenthesizedExpression(ts.visitNode(child.expression.expression, strip) as TsMorph.ts.Expression);
      }
      return ts.visitEachChild(child, strip, this.context);
    };
    return ts.visitNode(node, strip) as TsMorph.ts.Expression;
  }

  /** `x as T`, `(x as T)`, `x!`: an expression that is itself a cast. */
  private isCast(node: Node): boolean {
    const ts = this.ts;
    if (ts.isParenthesizedExpression(node)) return this.isCast(node.expression);
    return ts.isAsExpression(node) || ts.isTypeAssertionExpression(node) || ts.isSatisfiesExpression(node) || ts.isNonNullExpression(node);
  }

  /** Whether the expression's leftmost part is a cast (`(x as T).a`, `x!.b()`), which becomes `/** … *\/ (x)`. */
  private startsWithCast(node: Node): boolean {
    const ts = this.ts;
    if (ts.isAsExpression(node) || ts.isTypeAssertionExpression(node) || ts.isSatisfiesExpression(node) || ts.isNonNullExpression(node)) return true;
    if (ts.isParenthesizedExpression(node) || ts.isPropertyAccessExpression(node) || ts.isElementAccessExpression(node) || ts.isCallExpression(node)) return this.startsWithCast(node.expression);
    return false;
  }

  /** An identifier, `this`, or a property access chain of them: what `typeof` accepts. */
  private isEntityName(node: Node): boolean {
    const ts = this.ts;
    if (ts.isIdentifier(node) || node.kind === ts.SyntaxKind.ThisKeyword) return true;
    return ts.isPropertyAccessExpression(node) && ts.isIdentifier(node.name) && this.isEntityName(node.expression);
  }

  private expressionText(node: Node): string {
    return this.printer.printNode(this.ts.EmitHint.Expression, node, this.file);
  }

  private variableStatement(node: TsMorph.ts.VariableStatement): Node {
    const ts = this.ts;
    const f = this.factory;
    const declarations = node.declarationList.declarations;
    const [only] = declarations;
    if (declarations.length === 1 && only && !only.type && only.initializer && (ts.isArrowFunction(only.initializer) || ts.isFunctionExpression(only.initializer))) {
      // `const f = (a: A): R => …`: the tags above the statement, as for a function declaration.
      const fn = only.initializer;
      const tags = this.functionTags(fn);
      const body = ts.visitEachChild(fn, this.visit, this.context);
      const declaration = this.factory.updateVariableDeclaration(only, only.name, only.exclamationToken, undefined, body as TsMorph.ts.Expression);
      const updated = this.factory.updateVariableStatement(node, node.modifiers, this.factory.updateVariableDeclarationList(node.declarationList, [declaration]));
      return this.comment(updated, tags);
    }
    if (declarations.length === 1 && only?.type && only.initializer && (ts.isArrowFunction(only.initializer) || ts.isFunctionExpression(only.initializer))) {
      // A function typed by its variable: cast, so it takes its parameter types from there and a handler typed
      // `void | Promise<void>` may still return nothing (a @type on the variable would demand a value).
      const fn = this.comment(f.createParenthesizedExpression(ts.visitEachChild(only.initializer, this.visit, this.context)), [`@type {${this.typeText(only.type)}}`]);
      const declaration = f.updateVariableDeclaration(only, only.name, only.exclamationToken, undefined, fn);
      return f.updateVariableStatement(node, node.modifiers, f.updateVariableDeclarationList(node.declarationList, [declaration]));
    }
    const visited = ts.visitEachChild(node, this.visit, this.context);
    if (declarations.length === 1 && only?.type) return this.comment(visited, [`@type {${this.typeText(only.type)}}`]);
    return visited;
  }

  private classDeclaration(node: TsMorph.ts.ClassDeclaration | TsMorph.ts.ClassExpression): Node {
    const ts = this.ts;
    const f = this.factory;
    const tags = this.templateTags(node.typeParameters);
    for (const clause of node.heritageClauses ?? []) {
      for (const type of clause.types) {
        // The name as written: a local one, an imported class, or an imported type given a typedef above the class.
        const text = `${this.expressionText(type.expression)}${type.typeArguments ? `<${type.typeArguments.map((arg) => this.typeText(arg)).join(', ')}>` : ''}`;
        if (clause.token === ts.SyntaxKind.ImplementsKeyword) tags.push(`@implements {${text}}`);
        else if (type.typeArguments) tags.push(`@extends {${text}}`);
      }
    }
    // Parameter properties become fields with their type, assigned first in the constructor (after super()), as
    // TypeScript itself emits them; a field TypeScript declares from a parameter would have no type in JavaScript.
    const fields: TsMorph.ts.ClassElement[] = [];
    const members = node.members.map((member) => {
      if (!ts.isConstructorDeclaration(member) || !member.body) return member;
      const properties = member.parameters.filter((parameter): boolean => ts.isParameterPropertyDeclaration(parameter, member));
      if (properties.length === 0) return member;
      const assignments = properties.map((parameter) => {
        const name = (parameter.name as TsMorph.ts.Identifier).text;
        fields.push(this.comment(f.createPropertyDeclaration(undefined, name, undefined, undefined, undefined), parameter.type ? [`@type {${this.typeText(parameter.type)}}`] : []));
        return f.createExpressionStatement(f.createAssignment(f.createPropertyAccessExpression(f.createThis(), name), f.createIdentifier(name)));
      });
      const statements = [...member.body.statements];
      const superCall = statements.findIndex((statement) => ts.isExpressionStatement(statement) && ts.isCallExpression(statement.expression) && statement.expression.expression.kind === ts.SyntaxKind.SuperKeyword);
      statements.splice(superCall + 1, 0, ...assignments);
      const parameters = member.parameters.map((parameter) =>
        properties.includes(parameter) ? f.updateParameterDeclaration(parameter, undefined, parameter.dotDotDotToken, parameter.name, parameter.questionToken, parameter.type, parameter.initializer) : parameter,
      );
      return f.updateConstructorDeclaration(member, member.modifiers, parameters, f.updateBlock(member.body, statements));
    });
    const visitedMembers = [...fields, ...members].map((member) => ts.visitNode(member, this.visit) as TsMorph.ts.ClassElement);
    const updated = ts.isClassDeclaration(node)
      ? f.updateClassDeclaration(node, node.modifiers, node.name, node.typeParameters, node.heritageClauses, visitedMembers)
      : f.updateClassExpression(node, node.modifiers, node.name, node.typeParameters, node.heritageClauses, visitedMembers);
    return this.comment(updated, tags);
  }

  private functionTags(node: TsMorph.ts.SignatureDeclarationBase): string[] {
    const ts = this.ts;
    const tags = this.templateTags(node.typeParameters);
    const parameters = node.parameters.filter((parameter) => !(ts.isIdentifier(parameter.name) && parameter.name.text === 'this'));
    const thisParameter = node.parameters.find((parameter) => ts.isIdentifier(parameter.name) && parameter.name.text === 'this');
    if (thisParameter?.type) tags.push(`@this {${this.typeText(thisParameter.type)}}`);
    // Untyped parameters are typed by context (a callback): a @param would override that, so none is written.
    if (parameters.some((parameter) => parameter.type)) {
      const positional = parameters.some((parameter) => !ts.isIdentifier(parameter.name));
      parameters.forEach((parameter, index) => {
        // An untyped one keeps the type of its default; a tag is needed only to keep destructured ones in place.
        if (!parameter.type && !positional) return;
        const name = ts.isIdentifier(parameter.name) ? parameter.name.text : `param${index}`;
        const optional = parameter.questionToken !== undefined || parameter.initializer !== undefined;
        let type = parameter.type ? this.typeText(parameter.type) : 'any';
        if (parameter.dotDotDotToken) type = parameter.type && ts.isArrayTypeNode(parameter.type) ? `...${this.typeText(parameter.type.elementType)}` : `...any`;
        tags.push(`@param {${type}} ${optional ? `[${name}]` : name}`);
      });
    }
    if (node.type) tags.push(`@returns {${this.typeText(node.type)}}`);
    return tags;
  }

  private templateTags(parameters: TsMorph.ts.NodeArray<TsMorph.ts.TypeParameterDeclaration> | undefined): string[] {
    return (parameters ?? []).map((parameter) => {
      const constraint = parameter.constraint ? `{${this.typeText(parameter.constraint)}} ` : '';
      const name = parameter.default ? `[${parameter.name.text}=${this.typeText(parameter.default)}]` : parameter.name.text;
      return `@template ${constraint}${name}`;
    });
  }

  private interfaceType(node: TsMorph.ts.InterfaceDeclaration): string {
    const literal = this.typeText(this.factory.createTypeLiteralNode(node.members));
    const bases = (node.heritageClauses ?? []).flatMap((clause) => clause.types.map((type) => this.typeText(type)));
    return [...bases, ...(node.members.length > 0 || bases.length === 0 ? [literal] : [])].join(' & ');
  }

  /** `@typedef`: as `{object}` with one `@property` per member (keeping its doc) when every member allows it. */
  private typedef(
    node: Node,
    name: string,
    typeParameters: TsMorph.ts.NodeArray<TsMorph.ts.TypeParameterDeclaration> | undefined,
    type: string,
    members: TsMorph.ts.NodeArray<TsMorph.ts.TypeElement> | undefined,
    plain: boolean,
  ): Node {
    const ts = this.ts;
    const tags = this.templateTags(typeParameters);
    const simple =
      plain &&
      members !== undefined &&
      members.length > 0 &&
      members.every((member) => (ts.isPropertySignature(member) || ts.isMethodSignature(member)) && (ts.isIdentifier(member.name) || ts.isStringLiteral(member.name)));
    if (!simple) {
      tags.push(`@typedef {${type}} ${name}`);
      return this.comment(this.factory.createNotEmittedStatement(node), tags);
    }
    tags.push(`@typedef {object} ${name}`);
    for (const member of members) {
      const memberName = (member.name as TsMorph.ts.Identifier).text;
      let memberType: string;
      if (ts.isMethodSignature(member)) {
        const fn = this.factory.createFunctionTypeNode(member.typeParameters, member.parameters, member.type ?? this.factory.createKeywordTypeNode(ts.SyntaxKind.AnyKeyword));
        memberType = this.typeText(fn);
      } else {
        const type = (member as TsMorph.ts.PropertySignature).type;
        memberType = type ? this.typeText(type) : 'any';
      }
      const docs = (member as { jsDoc?: TsMorph.ts.JSDoc[] }).jsDoc ?? [];
      const description = docs.map((doc) => ts.getTextOfJSDocComment(doc.comment) ?? '').join(' ').trim();
      const label = member.questionToken ? `[${memberName}]` : memberName;
      tags.push(`@property {${memberType}} ${label}${description ? ` ${description.replace(/\n/g, '\n  ')}` : ''}`);
    }
    return this.comment(this.factory.createNotEmittedStatement(node), tags);
  }

  /** A type as one line of TypeScript, comments left out, names imported from other modules as `import('…').Name`. */
  private typeText(node: TypeNode | TsMorph.ts.ExpressionWithTypeArguments): string {
    const ts = this.ts;
    const f = this.factory;
    const importOf = (name: string) => (this.typeOnly.has(name) || !this.valueUsed(name) ? this.imported.get(name) : undefined);
    const qualify = (child: Node): Node => {
      if (ts.isTypeReferenceNode(child) && ts.isIdentifier(child.typeName)) {
        const from = importOf(child.typeName.text);
        const args = child.typeArguments?.map((arg) => ts.visitNode(arg, qualify) as TypeNode);
        if (from) return f.createImportTypeNode(f.createLiteralTypeNode(f.createStringLiteral(from[0], true)), undefined, f.createIdentifier(from[1]), args);
      }
      if (ts.isTypeReferenceNode(child) && ts.isQualifiedName(child.typeName) && ts.isIdentifier(child.typeName.left)) {
        const from = importOf(child.typeName.left.text);
        const args = child.typeArguments?.map((arg) => ts.visitNode(arg, qualify) as TypeNode);
        if (from) {
          // `pg.Pool` from `import pg from 'pg'`: the package's own export (CommonJS packages have no `default`).
          const qualifier = from[1] === 'default' ? child.typeName.right : f.createQualifiedName(f.createIdentifier(from[1]), child.typeName.right);
          return f.createImportTypeNode(f.createLiteralTypeNode(f.createStringLiteral(from[0], true)), undefined, qualifier, args);
        }
      }
      if (ts.isTypeQueryNode(child) && ts.isIdentifier(child.exprName)) {
        const from = importOf(child.exprName.text);
        if (from) return f.createImportTypeNode(f.createLiteralTypeNode(f.createStringLiteral(from[0], true)), undefined, f.createIdentifier(from[1]), undefined, true);
      }
      if (ts.isExpressionWithTypeArguments(child) && ts.isIdentifier(child.expression)) {
        const from = importOf(child.expression.text);
        const args = child.typeArguments?.map((arg) => ts.visitNode(arg, qualify) as TypeNode);
        if (from) return f.createImportTypeNode(f.createLiteralTypeNode(f.createStringLiteral(from[0], true)), undefined, f.createIdentifier(from[1]), args);
      }
      return ts.visitEachChild(child, qualify, this.context);
    };
    const qualified = ts.visitNode(node, qualify) as Node;
    return this.printer
      .printNode(ts.EmitHint.Unspecified, qualified, this.file)
      .replace(/\s*\n\s*/g, ' ')
      .replace(/\*\//g, '*\\/');
  }

  /** Puts the tags above the node in one JSDoc comment (none when there are no tags); inline before an expression. */
  private comment<N extends Node>(node: N, tags: readonly string[]): N {
    const inline = this.ts.isExpression(node);
    if (tags.length === 0) return node;
    const text = tags.length === 1 && !tags[0]!.includes('\n') ? `${JSDOC_MARK} ${tags[0]} ` : `${JSDOC_MARK}\n${tags.map((tag) => ` * ${tag.replace(/\n/g, '\n * ')}`).join('\n')}\n `;
    return this.ts.addSyntheticLeadingComment(node, this.ts.SyntaxKind.MultiLineCommentTrivia, text, !inline);
  }
}

const quote = (text: string) => `'${text.replace(/\\/g, '\\\\').replace(/'/g, "\\'")}'`;
