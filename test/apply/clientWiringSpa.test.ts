import { describe, expect, it } from 'vitest';
import { wireClients } from '../../src/apply/transforms/clientWiring.js';
import type { WiringTarget } from '../../src/apply/types.js';

const imports = { aliases: [], defaultExtension: '' as const };
/** A React app beside the API (Vite, CRA): not Next.js, and another package than the routes'. */
const spa = { scaffoldDir: 'web/src/idempotency', imports, keyHeader: 'Idempotency-Key', next: false, elsewhere: true };
const checkout: WiringTarget = { action: 'createCheckout', codeName: 'createCheckout', trigger: 'http', method: 'POST', path: '/v1/checkout', file: 'api/src/routes.ts', line: 3, keySource: 'client', scope: 'global' };

const wire = (text: string, file = 'web/src/Pay.jsx', extra: ReadonlyArray<{ path: string; text: string }> = []) => wireClients([{ path: file, text }, ...extra], { routes: [checkout], actions: [] }, spa);

describe('client wiring of a React app beside the API', () => {
  it("matches a base URL that carries the route's prefix (${API}/checkout for /v1/checkout), not one whose leading segment is a parameter", () => {
    const text = "import axios from 'axios';\nconst API = import.meta.env.VITE_API;\nexport function Pay() {\n  const go = () => axios.post(`${API}/checkout`, { plan: 'pro' });\n  return <button onClick={go}>Pay</button>;\n}\n";
    const out = wire(text);
    expect(out.texts.get('web/src/Pay.jsx')).toContain("axios.post(`${API}/checkout`, { plan: 'pro' }, { headers: { 'Idempotency-Key': createCheckoutIntent.key() } }).then(createCheckoutIntent.settle, createCheckoutIntent.fail);");
    expect(out.texts.get('web/src/Pay.jsx')).toContain("import { useIdempotencyKey } from './idempotency/useIdempotencyKey';");
    const orders = { ...checkout, path: '/:org/checkout' };
    const byOrg = wireClients([{ path: 'web/src/Pay.jsx', text: text.replace('${API}/checkout', '/${org}/checkout') }], { routes: [orders], actions: [] }, spa);
    expect(byOrg.texts.size).toBe(1);
    const unrelated = wireClients([{ path: 'web/src/Pay.jsx', text: text.replace('${API}/checkout', '${API}') }], { routes: [checkout], actions: [] }, spa);
    expect(unrelated.found.size).toBe(0);
  });

  it('adds the header to a config that has headers, the body undefined to a call without one, and the config form', () => {
    const text = [
      "import axios from 'axios';",
      'export default function Pay({ token }) {',
      "  const a = () => axios.post('/v1/checkout', {}, { headers: { Authorization: token } });",
      "  const b = () => axios.post('/v1/checkout');",
      "  const c = () => axios({ method: 'post', url: '/v1/checkout', data: {} });",
      '  return <button onClick={() => a().then(b).then(c)}>Pay</button>;',
      '}',
      '',
    ].join('\n');
    const out = wire(text);
    const wired = out.texts.get('web/src/Pay.jsx')!;
    expect(wired).toContain("axios.post('/v1/checkout', {}, { headers: { Authorization: token, 'Idempotency-Key': createCheckoutIntent.key() } }).then(createCheckoutIntent.settle, createCheckoutIntent.fail);");
    expect(wired).toContain("axios.post('/v1/checkout', undefined, { headers: { 'Idempotency-Key': createCheckoutIntent.key() } }).then(");
    expect(wired).toContain("axios({ method: 'post', url: '/v1/checkout', data: {}, headers: { 'Idempotency-Key': createCheckoutIntent.key() } }).then(");
    expect(wired.match(/useIdempotencyKey\(\)/g)).toHaveLength(1);
    const again = wire(wired);
    expect(again.texts.size).toBe(0);
    expect(again.edits).toEqual([]);
  });

  it('follows an axios instance exported by a module of the app, and leaves a config it cannot read to the user', () => {
    const client = { path: 'web/src/lib/http.js', text: "import axios from 'axios';\nconst http = axios.create({ baseURL: '/v1' });\nexport default http;\n" };
    const text = "import http from './lib/http';\nexport const Pay = ({ options }) => {\n  const go = () => http.post('/v1/checkout', {}, options);\n  return <button onClick={go}>Pay</button>;\n};\n";
    const out = wire(text, 'web/src/Pay.jsx', [client]);
    expect(out.texts.size).toBe(0);
    expect(out.manual.map((m) => `${m.file}:${m.line} ${m.reason}`)).toEqual([expect.stringMatching(/^web\/src\/Pay\.jsx:3 POST \/v1\/checkout: its config is not an object literal/)]);
  });

  it('follows an instance a hook of the app returns (const api = useAxiosPrivate(), Zukashi/e-commerce-food), and a URL without its leading slash', () => {
    const instance = { path: 'web/src/api/axios.ts', text: "import axios from 'axios';\nexport default axios.create({ baseURL: '/v1' });\nexport const axiosPrivate = axios.create({ baseURL: '/v1', withCredentials: true });\n" };
    const hook = {
      path: 'web/src/hooks/use-axios-private.ts',
      text: [
        "import { useEffect } from 'react';",
        "import { axiosPrivate } from '../api/axios';",
        'export const useAxiosPrivate = () => {',
        '  useEffect(() => {',
        '    const id = axiosPrivate.interceptors.response.use((r) => r);',
        '    return () => axiosPrivate.interceptors.response.eject(id);',
        '  }, []);',
        '  return axiosPrivate;',
        '};',
        '',
      ].join('\n'),
    };
    const page = "import { useAxiosPrivate } from '../hooks/use-axios-private';\nexport const Pay = () => {\n  const api = useAxiosPrivate();\n  const go = async () => { await api.post('v1/checkout', { plan: 'pro' }); };\n  return <button onClick={go}>Pay</button>;\n};\n";
    const out = wire(page, 'web/src/pages/Pay.tsx', [instance, hook]);
    expect(out.texts.get('web/src/pages/Pay.tsx')).toContain("await api.post('v1/checkout', { plan: 'pro' }, { headers: { 'Idempotency-Key': createCheckoutIntent.key() } }).then(createCheckoutIntent.settle, createCheckoutIntent.fail);");
    // A hook that returns something else (its own state) is not an axios instance: its post() is left alone.
    const other = { ...hook, text: hook.text.replace('return axiosPrivate;', 'return { post: (url: string) => url };') };
    expect(wire(page, 'web/src/pages/Pay.tsx', [instance, other]).found.size).toBe(0);
  });

  it('keys a lowercase component that calls hooks (export default function checkoutForm), and a config held in a local const', () => {
    // anfemece123/Henry-s-Final-Project client/src/Stripe/checkoutForm.jsx, shortened.
    const text = [
      "import axios from 'axios';",
      "import { useSelector } from 'react-redux';",
      'export default function checkoutForm() {',
      '  const token = useSelector((state) => state.auth.token);',
      '  const pay = async () => {',
      '    const config = { headers: { Authorization: `Bearer ${token}` } };',
      "    await axios.post('http://localhost:3001/v1/checkout', { plan: 'pro' }, config);",
      '  };',
      '  return <button onClick={pay}>Pay</button>;',
      '}',
      '',
    ].join('\n');
    const out = wire(text);
    const wired = out.texts.get('web/src/Pay.jsx')!;
    expect(wired).toContain("{ plan: 'pro' }, { ...config, headers: { ...config.headers, 'Idempotency-Key': createCheckoutIntent.key() } }).then(createCheckoutIntent.settle, createCheckoutIntent.fail);");
    // The line a reviewer reads in the original file, not the one the hook's import moved it to.
    expect(out.edits.map((e) => e.summary)).toEqual(['checkoutForm sends the Idempotency-Key header from useIdempotencyKey() to POST /v1/checkout (line 7)']);
    expect(wire(wired).texts.size).toBe(0);
    // A lowercase function that calls no hook is no component (a plain helper): left to the user.
    const helper = wire(text.replace('  const token = useSelector((state) => state.auth.token);\n', '  const token = readToken();\n'));
    expect(helper.texts.get('web/src/Pay.jsx') ?? '').not.toContain('useIdempotencyKey();');
  });

  it('a router.post of the app is no axios call, and a React Native screen is left to the user with the reason', () => {
    const router = wire("import { Router } from 'express';\nconst router = Router();\nexport function Pay() {\n  router.post('/v1/checkout', () => undefined);\n  return null;\n}\n");
    expect(router.found.size).toBe(0);
    const native = wire("import { Button } from 'react-native';\nexport function Pay() {\n  const go = () => fetch('/v1/checkout', { method: 'POST' });\n  return <Button onPress={go} title=\"Pay\" />;\n}\n", 'mobile/Pay.tsx');
    expect(native.texts.size).toBe(0);
    expect(native.manual.map((m) => m.reason)).toEqual([expect.stringContaining('React Native component has no Web Crypto')]);
  });

  it('keys an API helper module (cgarrovillo/ecommerce utils/api-helpers.ts) and passes the intent\'s key from the components that call it', () => {
    const helpers = {
      path: 'web/src/utils/api-helpers.ts',
      text: "import axios from 'axios';\nconst API = process.env.API_URL;\nexport const checkout = async (cart: string[], coupon?: string) => {\n  const { data } = await axios.post(`${API}/checkout`, { cart, coupon });\n  return data;\n};\nexport const ping = () => axios.get(`${API}/health`);\n",
    };
    const cart = {
      path: 'web/src/components/Cart.tsx',
      text: "import { checkout } from '../utils/api-helpers';\nexport function Cart({ items }: { items: string[] }) {\n  const buy = async () => {\n    const session = await checkout(items);\n    window.location.href = session.url;\n  };\n  return <button onClick={buy}>Buy</button>;\n}\n",
    };
    const script = { path: 'web/scripts/smoke.ts', text: "import { checkout } from '../src/utils/api-helpers';\nvoid checkout(['a']);\n" };
    const out = wireClients([helpers, cart, script], { routes: [checkout], actions: [] }, spa);
    expect(out.texts.get('web/src/utils/api-helpers.ts')).toContain("export const checkout = async (cart: string[], coupon?: string, idempotencyKey?: string) => {\n  const { data } = await axios.post(`${API}/checkout`, { cart, coupon }, { headers: { ...(idempotencyKey ? { 'Idempotency-Key': idempotencyKey } : {}) } });\n");
    expect(out.texts.get('web/src/utils/api-helpers.ts')).toContain('export const ping = () => axios.get(`${API}/health`);');
    const wired = out.texts.get('web/src/components/Cart.tsx')!;
    expect(wired).toContain('  const createCheckoutIntent = useIdempotencyKey();\n');
    expect(wired).toContain('const session = await checkout(items, undefined, createCheckoutIntent.key()).then(createCheckoutIntent.settle, createCheckoutIntent.fail);');
    expect(out.edits.map((e) => `${e.file}: ${e.summary}`)).toEqual([
      'web/src/utils/api-helpers.ts: checkout sends the Idempotency-Key header to POST /v1/checkout when its caller passes a key (line 4)',
      'web/src/components/Cart.tsx: Cart passes a key from useIdempotencyKey() to checkout, which sends it to POST /v1/checkout (line 4)',
    ]);
    // The smoke script calls it outside any component: listed, and it still compiles (the key is optional).
    expect(out.manual.map((m) => `${m.file}:${m.line} ${m.reason}`)).toEqual([expect.stringMatching(/^web\/scripts\/smoke\.ts:2 POST \/v1\/checkout here cannot get a key mechanically: it calls checkout outside a React component/)]);
    const again = wireClients([...[helpers, cart].map((f) => ({ path: f.path, text: out.texts.get(f.path)! })), script], { routes: [checkout], actions: [] }, spa);
    expect(again.texts.size).toBe(0);
    expect(again.edits).toEqual([]);
  });

  it('leaves a Redux thunk that makes the request (bradtraversy/proshop_mern orderActions.js) to the user: its caller gets a function, nothing to settle', () => {
    const actions = {
      path: 'web/src/actions/orderActions.js',
      text: "import axios from 'axios';\nexport const createOrder = (order) => async (dispatch, getState) => {\n  const { data } = await axios.post('/v1/checkout', order, { headers: { 'Content-Type': 'application/json' } });\n  dispatch({ type: 'ORDER_CREATE_SUCCESS', payload: data });\n};\n",
    };
    const screen = { path: 'web/src/screens/PlaceOrder.jsx', text: "import { createOrder } from '../actions/orderActions';\nexport default function PlaceOrder({ dispatch, cart }) {\n  return <button onClick={() => dispatch(createOrder(cart))}>Place order</button>;\n}\n" };
    const out = wire(screen.text, screen.path, [actions]);
    expect(out.texts.size).toBe(0);
    expect(out.manual.map((m) => `${m.file}:${m.line} ${m.reason}`)).toEqual([expect.stringMatching(/^web\/src\/actions\/orderActions\.js:3 POST \/v1\/checkout is requested in createOrder, which does not return the request's promise/)]);
  });
});
