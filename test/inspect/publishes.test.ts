import { rm } from 'node:fs/promises';
import { afterEach, describe, expect, it } from 'vitest';
import { inspectProject } from '../../src/inspect/index.js';
import type { EndpointFinding } from '../../src/inspect/types.js';
import { actionsFromInspection } from '../../src/questions/actionsFromInspection.js';
import { tempProject } from '../helpers/tempProject.js';

const roots: string[] = [];
afterEach(async () => {
  await Promise.all(roots.splice(0).map((r) => rm(r, { recursive: true, force: true })));
});

async function project(files: Record<string, string>): Promise<string> {
  const root = await tempProject(files, 'ib-publishes-');
  roots.push(root);
  return root;
}

const express = (routes: string, extra: Record<string, string>, dependencies: Record<string, string>) => ({
  'package.json': JSON.stringify({ name: 'api', dependencies: { express: '^4.19.0', ...dependencies } }),
  'src/app.js': `const express = require('express');\nconst events = require('./events');\nconst app = express();\n${routes}\nmodule.exports = app;\n`,
  ...extra,
});

async function publishing(root: string): Promise<Record<string, string[] | undefined>> {
  const { findings } = await inspectProject(root);
  return Object.fromEntries(findings.filter((f): f is EndpointFinding => f.kind === 'endpoint').map((f) => [`${f.method} ${f.path}`, f.publishes]));
}

describe('an endpoint whose handler publishes to a broker', () => {
  it('kafkajs producer.send({ topic, messages }) in a module that gets its producer from another (Bun-Hono-KafkaJS-Boilerplate@768db55): pre-checked, with the reason', async () => {
    const root = await project(
      express(
        "app.post('/products', async (req, res) => {\n  res.status(201).json(await events.productCreated(req.body));\n});\napp.post('/products/preview', (req, res) => res.json(req.body));",
        {
          'src/kafka.js': "const { Kafka } = require('kafkajs');\nmodule.exports.producer = new Kafka({ brokers: ['k:9092'] }).producer();\n",
          'src/events.js': "const { producer } = require('./kafka');\nasync function productCreated(product) {\n  await producer.send({ topic: 'products.created', messages: [{ key: product.id, value: JSON.stringify(product) }] });\n  return product;\n}\nmodule.exports = { productCreated };\n",
        },
        { kafkajs: '^2.2.4' },
      ),
    );
    expect(await publishing(root)).toEqual({ 'POST /products': ['kafka'], 'POST /products/preview': undefined });
    const inspection = await inspectProject(root);
    const created = actionsFromInspection(inspection).find((c) => c.action.route === 'POST /products');
    expect(created).toMatchObject({ checked: true, note: 'publishes to Kafka: a duplicate publishes the event again, and its consumers handle it twice' });
  });

  it('amqplib sendToQueue and a BullMQ queue.add in files that import them; a Set#add is no publish', async () => {
    const root = await project(
      express(
        "app.post('/orders', async (req, res) => {\n  await events.orderPlaced(req.body);\n  res.sendStatus(202);\n});\napp.post('/reports', async (req, res) => {\n  await events.queueReport(req.body);\n  res.sendStatus(202);\n});\napp.post('/tags', (req, res) => {\n  events.tag(req.body.tag);\n  res.sendStatus(204);\n});",
        {
          'src/events.js': "const amqp = require('amqplib');\nconst { Queue } = require('bullmq');\nconst reports = new Queue('reports');\nconst seen = new Set();\nlet channel;\nasync function orderPlaced(order) {\n  channel.sendToQueue('orders', Buffer.from(JSON.stringify(order)));\n}\nasync function queueReport(request) {\n  await reports.add('report', request);\n}\nfunction tag(name) {\n  seen.add(name);\n}\nmodule.exports = { orderPlaced, queueReport, tag };\n",
        },
        { amqplib: '^0.10.0', bullmq: '^5.0.0' },
      ),
    );
    expect(await publishing(root)).toEqual({ 'POST /orders': ['rabbitmq'], 'POST /reports': ['bullmq'], 'POST /tags': undefined });
  });
});
