import { ts } from 'ts-morph';
import { stringValue, unwrap } from '../inspect/parse/astHelpers.js';
import type { WriteFact } from '../model/codeFacts.js';
import { volatilePart } from './volatile.js';

/**
 * The repository a TypeORM / MikroORM call goes through and the entity it names: `this.petRepository.x(…)` → `pet`,
 * `getRepository(Pet).x(…)` → `Pet`, `manager.x(Order, …)` → `Order` (its entity or filter is then the second
 * argument). Shared by the code facts (writes) and the findings' data accesses (reads that check existence).
 */
export function repositoryOf(call: ts.CallExpression): { target: string; entity: ts.Expression | undefined } | undefined {
  if (!ts.isPropertyAccessExpression(call.expression)) return undefined;
  const receiver = unwrap(call.expression.expression);
  const first = call.arguments[0] && unwrap(call.arguments[0]);
  const named = ts.isPropertyAccessExpression(receiver) ? receiver.name.text : ts.isIdentifier(receiver) ? receiver.text : undefined;
  if (ts.isCallExpression(receiver) && /(^|\.)get(Custom)?Repository$/.test(receiver.expression.getText())) {
    const arg = receiver.arguments[0] && unwrap(receiver.arguments[0]);
    return arg && ts.isIdentifier(arg) ? { target: arg.text.replace(/Repository$/, ''), entity: first } : undefined;
  }
  if (named && /^(manager|entityManager|em|transactionalEntityManager)$/.test(named)) {
    if (!first || !ts.isIdentifier(first) || !/^[A-Z]/.test(first.text)) return undefined;
    return { target: first.text, entity: call.arguments[1] && unwrap(call.arguments[1]) };
  }
  const m = named ? /^(\w+?)Repo(?:sitory)?$/.exec(named) : null;
  if (!m) return undefined;
  // `this.addPatientRepository` declared `@InjectRepository(pat_patients_info)` or typed `Repository<Patientsrx>`: the
  // entity it is for, rather than the field's own name.
  const injected = ts.isPropertyAccessExpression(receiver) && receiver.expression.kind === ts.SyntaxKind.ThisKeyword ? injectedEntity(receiver, receiver.name.text) : undefined;
  return { target: injected ?? m[1]!.charAt(0).toLowerCase() + m[1]!.slice(1), entity: first };
}

/** The entity of a repository field: its `@InjectRepository(Entity)`, else its `Repository<Entity>` type. */
function injectedEntity(at: ts.Node, field: string): string | undefined {
  let cls: ts.Node | undefined = at.parent;
  while (cls && !ts.isClassLike(cls)) cls = cls.parent;
  if (!cls) return undefined;
  const declarations: Array<ts.ParameterDeclaration | ts.PropertyDeclaration> = [];
  for (const member of (cls as ts.ClassLikeDeclaration).members) {
    if (ts.isPropertyDeclaration(member)) declarations.push(member);
    if (ts.isConstructorDeclaration(member)) declarations.push(...member.parameters);
  }
  const declaration = declarations.find((d) => ts.isIdentifier(d.name) && d.name.text === field);
  if (!declaration) return undefined;
  for (const decorator of ts.canHaveDecorators(declaration) ? (ts.getDecorators(declaration) ?? []) : []) {
    const call = decorator.expression;
    const entity = ts.isCallExpression(call) && ts.isIdentifier(call.expression) && call.expression.text === 'InjectRepository' ? call.arguments[0] : undefined;
    if (entity && ts.isIdentifier(entity)) return entity.text;
  }
  const type = declaration.type;
  const argument = type && ts.isTypeReferenceNode(type) && /Repository$/.test(type.typeName.getText()) ? type.typeArguments?.[0] : undefined;
  return argument && ts.isTypeReferenceNode(argument) && ts.isIdentifier(argument.typeName) ? argument.typeName.text : undefined;
}

const REPOSITORY_WRITES: Record<string, WriteFact['kind']> = { save: 'create', insert: 'create', update: 'update', delete: 'delete', remove: 'delete', softDelete: 'delete', softRemove: 'delete', increment: 'update', decrement: 'update' };

/**
 * A TypeORM / MikroORM repository write: `this.petRepository.save(pet)`, `getRepository(Pet).insert(…)`,
 * `manager.save(Order, order)`, the entity named by the repository (`petRepository` → `pet`) or the argument.
 * `save` inserts unless the entity already has its primary key: one whose `id` the function sets from a value made
 * per attempt (`pet.id = uuid.v1()`) is a create that never meets the row a retry wrote; one whose `id` comes from
 * elsewhere (a route parameter) updates.
 */
export function repositoryWrite(call: ts.CallExpression, fn: ts.Node): Omit<WriteFact, 'file' | 'line'> | undefined {
  if (!ts.isPropertyAccessExpression(call.expression)) return undefined;
  const kind = REPOSITORY_WRITES[call.expression.name.text];
  if (!kind) return undefined;
  const repository = repositoryOf(call);
  if (!repository) return undefined;
  const { target, entity } = repository;
  const method = call.expression.name.text;
  if (method === 'increment' || method === 'decrement') {
    // `repo.increment({ id }, 'stock', 1)`; through a manager the entity comes first: `manager.increment(Product, { id }, 'stock', 1)`.
    const first = call.arguments[0];
    const managed = first !== undefined && ts.isIdentifier(first) && first.text === target;
    const field = stringValue(call.arguments[managed ? 2 : 1]);
    return { target, kind, relative: field === undefined ? [] : [field] };
  }
  if (method !== 'save' || !entity || !ts.isIdentifier(entity)) return { target, kind };
  // The entity's last value and `pet.id = …`, in the same function before the save.
  let assigned: ts.Expression | undefined;
  let value: ts.Expression | undefined;
  const visit = (node: ts.Node): void => {
    if (node.pos >= call.pos) return;
    if (ts.isVariableDeclaration(node) && ts.isIdentifier(node.name) && node.name.text === entity.text && node.initializer) value = node.initializer;
    if (ts.isBinaryExpression(node) && node.operatorToken.kind === ts.SyntaxKind.EqualsToken) {
      const left = unwrap(node.left);
      if (ts.isIdentifier(left) && left.text === entity.text) value = node.right;
      if (ts.isPropertyAccessExpression(left)) {
        const holder = unwrap(left.expression);
        if (ts.isIdentifier(holder) && holder.text === entity.text && left.name.text === 'id') assigned = node.right;
      }
    }
    ts.forEachChild(node, visit);
  };
  visit(fn);
  // An entity the function read (`await repo.findOne(…)`, `preload`) already has its row: saving it updates that row.
  if (!assigned && value && isEntityRead(value)) return { target, kind: 'update' };
  if (!assigned) return { target, kind: 'create' };
  const fresh = volatilePart(assigned);
  return fresh ? { target, kind: 'create', freshKey: fresh.getText() } : { target, kind: 'update' };
}

/** `await this.userRepository.findOne(id)`, `manager.findOneBy(User, …)`, `repo.preload(…)`: a row that exists. */
export function isEntityRead(value: ts.Expression): boolean {
  let node = unwrap(value);
  while (ts.isAwaitExpression(node) || ts.isNonNullExpression(node)) node = unwrap(node.expression);
  return ts.isCallExpression(node) && ts.isPropertyAccessExpression(node.expression) && /^(find(One)?(By|OrFail)?|findOneByOrFail|preload)$/.test(node.expression.name.text);
}
