import { Project, SyntaxKind } from 'ts-morph';
import { describe, expect, it } from 'vitest';
import { assignedPrincipal, assignsRequestUser } from '../../src/apply/requestPrincipal.js';
import { callerPath } from '../../src/apply/transforms/nestjsRoute.js';

describe('where the project puts the caller when it is not request.user', () => {
  it('a property its middleware assigns and its handlers read an id from (Acosta-gh e-commerce: req.usuario = decoded)', () => {
    const middleware = "const decoded = jwt.verify(token, secret);\nreq.usuario = decoded;\nnext();\n";
    const controller = 'const pedidos = await Pedido.findAll({ where: { usuarioId: req.usuario.id } });\nconst mine = req.usuario?.id;\n';
    expect(assignedPrincipal([middleware, controller])).toEqual(['usuario', 'id']);
  });

  it('the most read path wins; request parts and paths nobody assigns are not the caller', () => {
    const texts = [
      'req.account = session.account;\nreq.body.id;\nreq.params.id;\n',
      'const a = req.account.tenantId;\nconst b = req.account.tenantId;\nconst c = req.account.id;\nconst d = req.order.id;\n',
    ];
    expect(assignedPrincipal(texts)).toEqual(['account', 'tenantId']);
    expect(assignedPrincipal(['req.params.id; req.order.id;'])).toBeUndefined();
    // Comparisons are not assignments.
    expect(assignedPrincipal(['if (req.usuario == null) return;\nreq.usuario.id;'])).toBeUndefined();
  });
});

describe('request.user in a NestJS app (hoangnh228/nestjs-super@8e6b270)', () => {
  it('is set through a key constant as well as directly', () => {
    const guard = "import { REQUEST_USER_KEY } from './auth.constant';\nrequest[REQUEST_USER_KEY] = decoded;\n";
    expect(assignsRequestUser([guard, "export const REQUEST_USER_KEY = 'user'\n"])).toBe(true);
    expect(assignsRequestUser([guard, "export const REQUEST_USER_KEY = 'account'\n"])).toBe(false);
    expect(assignsRequestUser(["request['user'] = payload;"])).toBe(true);
    expect(assignsRequestUser(['if (request[KEY] === undefined) return;'])).toBe(false);
  });

  it("is read by the project's caller decorator: its argument names the field, else the id the body reads", () => {
    const sf = new Project({ useInMemoryFileSystem: true }).createSourceFile(
      '/orders.controller.ts',
      `export class OrderController {
  @Post() create(@ActiveUser('userId') userId: number, @Body() body: CreateOrderBodyDto) {}
  @Post('a') byUser(@CurrentUser() user: User) { return this.orders.list(user.id); }
  @Post('b') byEmail(@ActiveUser('email') email: string) {}
  @Post('c') anonymous(@Body() body: CreateOrderBodyDto, @Headers('x-user') header: string) {}
}
`,
    );
    const method = (name: string) => sf.getDescendantsOfKind(SyntaxKind.MethodDeclaration).find((m) => m.getName() === name)!;
    expect(callerPath(method('create'))).toEqual(['user', 'userId']);
    expect(callerPath(method('byUser'))).toEqual(['user', 'id']);
    expect(callerPath(method('byEmail'))).toBeUndefined();
    expect(callerPath(method('anonymous'))).toBeUndefined();
  });
});
