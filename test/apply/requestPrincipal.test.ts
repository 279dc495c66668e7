import { describe, expect, it } from 'vitest';
import { assignedPrincipal } from '../../src/apply/requestPrincipal.js';

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
