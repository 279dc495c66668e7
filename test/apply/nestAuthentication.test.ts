import { Project, SyntaxKind } from 'ts-morph';
import { describe, expect, it } from 'vitest';
import { nestMethodUnauthenticated, readNestAuthentication } from '../../src/apply/nestAuthentication.js';

const methodIn = (source: string, name: string) => {
  const sf = new Project({ useInMemoryFileSystem: true }).createSourceFile('users.controller.ts', source);
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
    const module = (routes: string) => `consumer.apply(AuthMiddleware).forRoutes(${routes});`;
    expect(nestMethodUnauthenticated(create, '/users', readNestAuthentication([module("{ path: 'users', method: RequestMethod.POST }")]))).toBe(false);
    expect(nestMethodUnauthenticated(create, '/users', readNestAuthentication([module("'users/*'")]))).toBe(false);
    expect(nestMethodUnauthenticated(create, '/users', readNestAuthentication([module('UserController')]))).toBe(false);
    expect(nestMethodUnauthenticated(create, '/users', readNestAuthentication(['providers: [{ provide: APP_GUARD, useClass: JwtGuard }]']))).toBe(false);
    // Another route of the same module is not this one.
    expect(nestMethodUnauthenticated(create, '/users', readNestAuthentication([module("{ path: 'user', method: RequestMethod.GET }")]))).toBe(true);
  });
});
