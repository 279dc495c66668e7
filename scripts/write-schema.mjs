// Writes the shipped JSON Schema from the same zod schema the loader validates with.
import { mkdir, writeFile } from 'node:fs/promises';
import { z } from 'zod';
import { configSchema } from '../dist/config/schema.js';

const schema = z.toJSONSchema(configSchema, { io: 'input', unrepresentable: 'any' });
schema.$id = 'https://unpkg.com/idempotency-builder/schema/idempotency.config.schema.json';
schema.title = 'idempotency-builder config';
await mkdir(new URL('../schema/', import.meta.url), { recursive: true });
await writeFile(new URL('../schema/idempotency.config.schema.json', import.meta.url), `${JSON.stringify(schema, null, 2)}\n`);
