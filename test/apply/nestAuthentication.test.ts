import { readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { Project, SyntaxKind } from 'ts-morph';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runApply } from '../../src/cli/apply.js';
import { copyFixture, type FixtureCopy } from './fixtureApp.js';
import { nestMethodUnauthenticated, nestUnauthenticatedRoute, readNestAuthentication } from '../../src/apply/nestAuthentication.js';

const methodIn = (source: string, name: string, file = 'users.controller.ts') => {
  const sf = new Project({ useInMemoryFileSystem: true }).createSourceFile(`/${file}`, source);
  return sf.getDescendantsOfKind(SyntaxKind.MethodDeclaration).find((m) => m.getName() === name)!;
};
const CONTROLLER = `
@ApiBearerAuth()
@Controller()
export class UserController {
  @Post('users')
  async create(@Body('user') user: CreateUserDto) {}

  @Put('user')
  async update(@User('id') id: number, @Body('user') user: UpdateUserDto) {}

  @Post('users/avatar')
  async avatar(@Req() req: Request) { return req.user; }

  @UseGuards(JwtAuthGuard)
  @Post('users/logout')
  async logout(@Body() body: unknown) {}
}
`;
const none = readNestAuthentication([]);
/** The project as apply reads it: files of text, the module's under src/app.module.ts. */
const projectWith = (texts: Record<string, string>) => readNestAuthentication(Object.entries(texts).map(([file, text]) => ({ file, text })));
const moduleText = (text: string) => projectWith({ 'src/app.module.ts': text });

describe('whether a NestJS route is authenticated', () => {
  it('a sign-up route with only request parts and a swagger auth note is not', () => {
    expect(nestMethodUnauthenticated(methodIn(CONTROLLER, 'create'), '/users', none)).toBe(true);
  });

  it('a parameter reading the caller, req.user, or a guard is', () => {
    expect(nestMethodUnauthenticated(methodIn(CONTROLLER, 'update'), '/user', none)).toBe(false);
    expect(nestMethodUnauthenticated(methodIn(CONTROLLER, 'avatar'), '/users/avatar', none)).toBe(false);
    expect(nestMethodUnauthenticated(methodIn(CONTROLLER, 'logout'), '/users/logout', none)).toBe(false);
  });

  it('middleware forRoutes naming the path, a wildcard above it or the controller, and a global guard, cover it', () => {
    const create = methodIn(CONTROLLER, 'create');
    const module = (routes: string) => moduleText(`consumer.apply(AuthMiddleware).forRoutes(${routes});`);
    expect(nestMethodUnauthenticated(create, '/users', module("{ path: 'users', method: RequestMethod.POST }"))).toBe(false);
    expect(nestMethodUnauthenticated(create, '/users', module("'users/*'"))).toBe(false);
    expect(nestMethodUnauthenticated(create, '/users', module('UserController'))).toBe(false);
    expect(nestMethodUnauthenticated(create, '/users', moduleText('providers: [{ provide: APP_GUARD, useClass: JwtGuard }]'))).toBe(false);
    // Another route of the same module is not this one.
    expect(nestMethodUnauthenticated(create, '/users', module("{ path: 'user', method: RequestMethod.GET }"))).toBe(true);
  });

  it('forRoutes spreading a const list of controllers covers those controllers only (gitroomhq/postiz-app ApiModule)', () => {
    const create = methodIn(CONTROLLER, 'create');
    const listed = (names: string) => moduleText(`const authenticatedController = [${names}];\nexport class ApiModule {\n  configure(consumer) {\n    consumer.apply(AuthMiddleware).forRoutes(...authenticatedController);\n  }\n}`);
    expect(nestMethodUnauthenticated(create, '/users', listed('BillingController, UserController'))).toBe(false);
    expect(nestMethodUnauthenticated(create, '/users', listed('BillingController, SettingsController'))).toBe(true);
    // A spread of something unread may take the route in: counted as covering (no warning without proof).
    expect(nestMethodUnauthenticated(create, '/users', moduleText('consumer.apply(AuthMiddleware).forRoutes(...routesFromConfig());'))).toBe(false);
  });
});

describe('middleware forRoutes and exclude, by path and method', () => {
  const ORDERS = `
@Controller('orders')
export class OrdersController {
  @Post()
  async create(@Body() body: unknown) {}

  @Put(':id')
  async replace(@Param('id') id: string, @Body() body: unknown) {}

  @Post(':orderId/refund')
  async refund(@Param('orderId') id: string) {}

  @All('sync')
  async sync(@Body() body: unknown) {}
}
`;
  const create = methodIn(ORDERS, 'create');
  const replace = methodIn(ORDERS, 'replace');
  const refund = methodIn(ORDERS, 'refund');
  const sync = methodIn(ORDERS, 'sync');
  const chain = (chained: string) => moduleText(`export class AppModule { configure(consumer: MiddlewareConsumer) { consumer.apply(AuthMiddleware)${chained}; } }`);
  const open = (method: Parameters<typeof nestMethodUnauthenticated>[0], route: string, project: ReturnType<typeof chain>) => nestMethodUnauthenticated(method, route, project);

  it("takes a RouteInfo's method into account: RequestMethod.ALL or a plain string covers every method", () => {
    expect(open(create, '/orders', chain(".forRoutes({ path: 'orders', method: RequestMethod.PUT })"))).toBe(true);
    expect(open(create, '/orders', chain(".forRoutes({ path: 'orders', method: RequestMethod.ALL })"))).toBe(false);
    expect(open(create, '/orders', chain(".forRoutes({ path: '/orders/', method: RequestMethod.POST })"))).toBe(false);
    expect(open(create, '/orders', chain(".forRoutes('orders')"))).toBe(false);
    // An @All() route is covered only by middleware that runs for every method.
    expect(open(sync, '/orders/sync', chain(".forRoutes({ path: 'orders/sync', method: RequestMethod.POST })"))).toBe(true);
    expect(open(sync, '/orders/sync', chain(".forRoutes({ path: 'orders/sync', method: RequestMethod.ALL })"))).toBe(false);
  });

  it('matches parameters and the wildcards of Nest 10 and Nest 11', () => {
    expect(open(replace, '/orders/:id', chain(".forRoutes({ path: 'orders/:orderId', method: RequestMethod.PUT })"))).toBe(false);
    // A literal path is one value of the route's parameter, not all of them.
    expect(open(replace, '/orders/:id', chain(".forRoutes('orders/latest')"))).toBe(true);
    expect(open(refund, '/orders/:orderId/refund', chain(".forRoutes('orders/*splat')"))).toBe(false);
    // Nest 11: `*splat` needs a segment, `{*splat}` makes it optional.
    expect(open(create, '/orders', chain(".forRoutes('orders/*splat')"))).toBe(true);
    expect(open(create, '/orders', chain(".forRoutes('orders/{*splat}')"))).toBe(false);
    for (const everything of ["'*'", "'(.*)'", "'{*splat}'", "'/*splat'", "{ path: '*', method: RequestMethod.ALL }"]) {
      expect(open(refund, '/orders/:orderId/refund', chain(`.forRoutes(${everything})`)), everything).toBe(false);
    }
    expect(open(refund, '/orders/:orderId/refund', chain(".forRoutes('users/(.*)')"))).toBe(true);
    // Nest 10's character quantifiers and mid-path wildcard.
    expect(open(create, '/orders', chain(".forRoutes('orderss?')"))).toBe(false);
    expect(open(create, '/orders', chain(".forRoutes('or*s')"))).toBe(false);
    expect(open(create, '/orders', chain(".forRoutes('orders+x')"))).toBe(true);
  });

  it('reads exclude: an excluded route is not covered, whatever the rest of the chain covers', () => {
    expect(open(create, '/orders', chain(".exclude({ path: 'orders', method: RequestMethod.POST }).forRoutes('*')"))).toBe(true);
    expect(open(create, '/orders', chain(".exclude('orders', 'health').forRoutes(OrdersController)"))).toBe(true);
    expect(open(refund, '/orders/:orderId/refund', chain(".exclude('orders/(.*)').forRoutes(OrdersController)"))).toBe(true);
    // Another method, or a wildcard below the path only, leaves it covered.
    expect(open(create, '/orders', chain(".exclude({ path: 'orders', method: RequestMethod.GET }).forRoutes('*')"))).toBe(false);
    expect(open(create, '/orders', chain(".exclude('orders/(.*)').forRoutes(OrdersController)"))).toBe(false);
    // An @All() route is out only when every method is.
    expect(open(sync, '/orders/sync', chain(".exclude({ path: 'orders/sync', method: RequestMethod.POST }).forRoutes('*')"))).toBe(false);
  });

  it('keeps each chain its own excludes, and counts what it cannot read as covering', () => {
    expect(open(create, '/orders', chain(".exclude('orders').forRoutes('*').apply(SessionMiddleware).forRoutes(OrdersController)"))).toBe(false);
    expect(open(create, '/orders', chain(".forRoutes(OrdersController).apply(AuditMiddleware).exclude('orders').forRoutes('*')"))).toBe(false);
    expect(open(create, '/orders', chain('.forRoutes(...PROTECTED_ROUTES)'))).toBe(false);
    expect(moduleText("const ProtectedRoute = { path: 'orders', method: RequestMethod.POST };\nconsumer.apply(AuthMiddleware).forRoutes(ProtectedRoute);")).toMatchObject({ middleware: [{ routes: [{ kind: 'unknown' }] }] });
    expect(open(create, '/orders', moduleText("const ProtectedRoute = { path: 'orders', method: RequestMethod.POST };\nconsumer.apply(AuthMiddleware).forRoutes(ProtectedRoute);"))).toBe(false);
    expect(open(create, '/orders', chain(".forRoutes({ path: 'orders', method: methodOf('create') })"))).toBe(false);
    // Another controller is not this one; an exclude it cannot read takes nothing out.
    expect(open(create, '/orders', chain('.forRoutes(UsersController)'))).toBe(true);
    expect(open(create, '/orders', chain('.exclude(...PUBLIC_ROUTES).forRoutes(OrdersController)'))).toBe(false);
  });
});

describe('@Public()-style opt-outs under a global guard', () => {
  const GUARD = `@Module({ providers: [{ provide: APP_GUARD, useClass: JwtAuthGuard }] })\nexport class AppModule {}\n`;
  const PUBLIC = `import { SetMetadata } from '@nestjs/common';\nexport const IS_PUBLIC_KEY = 'isPublic';\nexport const Public = () => SetMetadata(IS_PUBLIC_KEY, true);\n`;
  const controller = (imports: string, decorators: string, parameter = '@Body() body: SignUpDto') => `import { Body, Controller, Post } from '@nestjs/common';
${imports}
@Controller('auth')
export class AuthController {
  ${decorators}
  @Post('sign-up')
  async signUp(${parameter}) {}
}
`;
  const FILE = 'src/auth/auth.controller.ts';
  const signUp = (text: string) => methodIn(text, 'signUp', FILE);

  it('a route opted out by a decorator the project declares as SetMetadata(IS_PUBLIC_KEY, true) is not authenticated', () => {
    const project = projectWith({ 'src/app.module.ts': GUARD, 'src/auth/public.decorator.ts': PUBLIC });
    const method = signUp(controller("import { Public } from './public.decorator';", '@Public()'));
    expect(nestUnauthenticatedRoute(method, '/auth/sign-up', project)).toEqual({ optOut: '@Public()', on: 'route' });
    // Without the decorator, the global guard covers it as before.
    expect(nestUnauthenticatedRoute(signUp(controller('', '')), '/auth/sign-up', project)).toBeUndefined();
  });

  it('follows aliases, barrels and tsconfig paths, and reads other spellings of the key and the factory', () => {
    const files = {
      'src/app.module.ts': GUARD,
      'src/common/index.ts': "export * from './decorators/skip-auth.decorator';\nexport { AllowAnonymous as Anonymous } from './decorators/anonymous';\n",
      'src/common/decorators/skip-auth.decorator.ts': "import { SetMetadata, applyDecorators } from '@nestjs/common';\nimport { ApiSecurity } from '@nestjs/swagger';\nexport function SkipAuth() {\n  return applyDecorators(SetMetadata('skipAuth', true), ApiSecurity('none'));\n}\n",
      'src/common/decorators/anonymous.ts': "import { SetMetadata } from '@nestjs/common';\nexport const AllowAnonymous = (): CustomDecorator => SetMetadata(Keys.ALLOW_ANONYMOUS, true);\n",
    };
    const project = readNestAuthentication(Object.entries(files).map(([file, text]) => ({ file, text })), { aliases: [{ prefix: '@app/', dir: 'src' }] });
    const skip = signUp(controller("import { SkipAuth as NoLogin } from '../common';", '@NoLogin()'));
    expect(nestUnauthenticatedRoute(skip, '/auth/sign-up', project)).toEqual({ optOut: '@NoLogin()', on: 'route' });
    const anonymous = signUp(controller("import { Anonymous } from '@app/common/index.js';", '@Anonymous()'));
    expect(nestUnauthenticatedRoute(anonymous, '/auth/sign-up', project)).toEqual({ optOut: '@Anonymous()', on: 'route' });
    // On the class too, declared in the controller's own file, and a SetMetadata result used as the decorator itself.
    const local = `import { SetMetadata } from '@nestjs/common';\nexport const Open = SetMetadata('IS_PUBLIC', true);\n@Open\n@Controller('auth')\nexport class AuthController {\n  @Post('sign-up')\n  async signUp(@Body() body: SignUpDto) {}\n}\n`;
    expect(nestUnauthenticatedRoute(signUp(local), '/auth/sign-up', project)).toEqual({ optOut: '@Open', on: 'controller' });
  });

  it('keeps today\'s answer when the decorator cannot be resolved or sets other metadata', () => {
    const project = projectWith({ 'src/app.module.ts': GUARD, 'src/auth/public.decorator.ts': PUBLIC, 'src/auth/roles.ts': "export const Roles = (...roles: string[]) => SetMetadata('roles', roles);\nexport const NotPublic = () => SetMetadata(IS_PUBLIC_KEY, false);\n" });
    for (const [imports, decorator] of [
      ["import { Public } from '@acme/auth';", '@Public()'],
      ["import { Public } from './missing';", '@Public()'],
      ["import { NotPublic } from './roles';", '@NotPublic()'],
      ["import { Public } from './public.decorator';", '@ApiOperation({ summary: "Public" })'],
    ]) {
      expect(nestUnauthenticatedRoute(signUp(controller(imports!, decorator!)), '/auth/sign-up', project), decorator).toBeUndefined();
    }
  });

  it('an opted-out route still counts as authenticated when something else authenticates it', () => {
    const project = projectWith({ 'src/app.module.ts': `${GUARD}consumer.apply(SessionMiddleware).forRoutes('auth/*splat');`, 'src/auth/public.decorator.ts': PUBLIC });
    const imports = "import { Public } from './public.decorator';";
    expect(nestUnauthenticatedRoute(signUp(controller(imports, '@Public()')), '/auth/sign-up', project)).toBeUndefined();
    const guarded = projectWith({ 'src/app.module.ts': GUARD, 'src/auth/public.decorator.ts': PUBLIC });
    expect(nestUnauthenticatedRoute(signUp(controller(imports, '@Public()', "@CurrentUser() user: User")), '/auth/sign-up', guarded)).toBeUndefined();
    expect(nestUnauthenticatedRoute(signUp(controller(imports, '@Public()\n  @UseGuards(LocalAuthGuard)')), '/auth/sign-up', guarded)).toBeUndefined();
  });

  it("a project decorator named for the opt-out counts though it sets its metadata through the project's own factory (nestjs-super@8e6b270)", () => {
    const auth = "import { SetMetadata } from '@nestjs/common';\nexport const Auth = (types: string[]) => SetMetadata('authType', { types });\nexport const IsPublic = () => Auth(['none']);\nexport const IsAdmin = () => Auth(['admin']);\n";
    const project = projectWith({ 'src/app.module.ts': GUARD, 'src/auth/auth.decorator.ts': auth });
    expect(nestUnauthenticatedRoute(signUp(controller("import { IsPublic } from './auth.decorator';", '@IsPublic()')), '/auth/sign-up', project)).toEqual({ optOut: '@IsPublic()', on: 'route' });
    expect(nestUnauthenticatedRoute(signUp(controller("import { IsAdmin } from './auth.decorator';", '@IsAdmin()')), '/auth/sign-up', project)).toBeUndefined();
  });

  it('an opt-out named like an auth decorator (@SkipAuth) authenticates nothing even without a global guard', () => {
    const project = projectWith({ 'src/auth/skip.ts': "export const SkipAuth = () => SetMetadata('skipAuth', true);\n" });
    expect(nestUnauthenticatedRoute(signUp(controller("import { SkipAuth } from './skip';", '@SkipAuth()')), '/auth/sign-up', project)).toEqual({});
  });
});

// The NestJS fixture rebuilt on the common pattern: a global JwtAuthGuard-like APP_GUARD and a @Public() opt-out.
describe('apply on a NestJS app whose scoped route opts out of the global guard', { timeout: 300_000 }, () => {
  let copy: FixtureCopy;
  const file = (name: string) => path.join(copy.dir, name);
  const edit = async (name: string, change: (text: string) => string) => writeFile(file(name), change(await readFile(file(name), 'utf8')));

  beforeAll(async () => {
    // The handler moves one line down (the decorator's import replaces the guard's; @Public() goes above @Post()).
    copy = await copyFixture('nestjs', (config) => config.replace('src/invoices.controller.ts:14', 'src/invoices.controller.ts:15'));
    await writeFile(file('src/public.decorator.ts'), "import { SetMetadata } from '@nestjs/common';\n\nexport const IS_PUBLIC_KEY = 'isPublic';\nexport const Public = () => SetMetadata(IS_PUBLIC_KEY, true);\n");
    await edit('src/app.module.ts', (text) =>
      text
        .replace("import { Module } from '@nestjs/common';", "import { Module } from '@nestjs/common';\nimport { APP_GUARD } from '@nestjs/core';\nimport { AuthGuard } from './auth.guard.js';")
        .replace('controllers: [InvoicesController],', 'controllers: [InvoicesController],\n  providers: [{ provide: APP_GUARD, useClass: AuthGuard }],'),
    );
    await edit('src/invoices.controller.ts', (text) =>
      text
        .replace("import { AuthGuard } from './auth.guard.js';", "import { Public } from './public.decorator.js';")
        .replace('@UseGuards(AuthGuard)\n', '')
        .replace('  @Post()\n', '  @Public()\n  @Post()\n'),
    );
  });
  afterAll(async () => {
    await copy?.remove();
  });

  it('warns that the route is open, naming the decorator, and says nothing once the opt-out is gone', async () => {
    const open = await runApply({ cwd: copy.dir, dryRun: true, quiet: true }, { interactive: false });
    const warning = open.manual.find((m) => m.reason.includes('opts out of the global guard'));
    // The handler's line once apply's imports are in (15 as inspected).
    expect(warning).toMatchObject({ action: 'issueInvoice', file: 'src/invoices.controller.ts', line: 17 });
    expect(warning!.reason).toContain('the route opts out of the global guard with @Public(), so nothing authenticates it before the handler, but the action\'s keys are scoped per user');
    expect(warning!.reason).toContain('take @Public() off the route or cover the route with your auth middleware\'s forRoutes');

    await edit('src/invoices.controller.ts', (text) => text.replace('  @Public()\n', '  // @Public() was here\n'));
    const guarded = await runApply({ cwd: copy.dir, dryRun: true, quiet: true }, { interactive: false });
    expect(guarded.manual.filter((m) => /authenticat/.test(m.reason))).toEqual([]);
  });
});
