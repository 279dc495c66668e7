import { describeAdapterScaffold } from './adapterScaffold.js';

await describeAdapterScaffold({ framework: 'hono', module: 'hono', firstImport: "import { Hono } from 'hono';", testImport: "from 'hono'" });
