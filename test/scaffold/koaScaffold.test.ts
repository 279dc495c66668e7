import { describeAdapterScaffold } from './adapterScaffold.js';

await describeAdapterScaffold({ framework: 'koa', module: 'koa', firstImport: "import Router from '@koa/router';", testImport: "from 'koa'" });
