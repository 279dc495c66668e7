import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { ts } from 'ts-morph';
import { afterAll, describe, expect, it } from 'vitest';
import { originOf } from '../../src/inspect/analyseFile.js';
import { CONNECTION_MENTIONS, envNameOf, prismaConnection, scanConnections, sequelizeConfigConnections, sequelizercConfigPath } from '../../src/inspect/detectors/dbConnection.js';
import { inspectProject } from '../../src/inspect/index.js';
import { lineOf } from '../../src/inspect/parse/astHelpers.js';
import { indexSource } from '../../src/inspect/parse/indexSource.js';
import { parseSource } from '../../src/inspect/parse/parseSource.js';
import { findStoreConnection } from '../../src/inspect/stack/findStoreConnection.js';
import { pickConnections } from '../../src/inspect/stack/storeConnection.js';

/** The connections one source file states, as the detector reads them. */
function scan(source: string, databases: string[] = []) {
  const { sf } = parseSource('src/db.ts', source, { parents: false });
  const { imports } = indexSource(sf, 'src/db.ts');
  return scanConnections(sf, { line: (node) => lineOf(sf, node), originOf: (expr) => originOf(expr, imports), databases });
}

describe('inspect: where the project connects to its database', () => {
  it('pg Pool with a connection string from process.env.X or process.env[\'X\']', () => {
    expect(scan("import { Pool } from 'pg';\n\nexport const pool = new Pool({ connectionString: process.env.POSTGRES_URL });\n")).toEqual([
      { store: 'postgres', url: 'POSTGRES_URL', line: 3 },
    ]);
    expect(scan("import pg from 'pg';\nexport const db = new pg.Pool({ connectionString: process.env['SUPABASE_DB_URL'] ?? '' });\n")).toEqual([
      { store: 'postgres', url: 'SUPABASE_DB_URL', line: 2 },
    ]);
  });

  it('pg Client from parts, the port through Number()', () => {
    const source = `import { Client } from 'pg';
const client = new Client({
  host: process.env.DB_HOST,
  port: Number(process.env.DB_PORT),
  user: process.env.DB_USER,
  password: process.env.DB_PASSWORD,
  database: process.env.DB_NAME,
});
`;
    expect(scan(source)).toEqual([{ store: 'postgres', host: 'DB_HOST', port: 'DB_PORT', user: 'DB_USER', password: 'DB_PASSWORD', database: 'DB_NAME', line: 2 }]);
  });

  it('mysql2 createPool with host / port / user / password / database from env.X', () => {
    const source = `import mysql from 'mysql2/promise';
import { env } from './env';
export const pool = mysql.createPool({ host: env.MYSQL_HOST, port: +env.MYSQL_PORT, user: env.MYSQL_USER, password: env.MYSQL_PASSWORD, database: env.MYSQL_DATABASE });
`;
    expect(scan(source)).toEqual([{ store: 'mysql', host: 'MYSQL_HOST', port: 'MYSQL_PORT', user: 'MYSQL_USER', password: 'MYSQL_PASSWORD', database: 'MYSQL_DATABASE', line: 3 }]);
  });

  it('fastify/demo: fastify.config.MYSQL_* in the connection of a knex config (returned by autoConfig, passed to knex())', () => {
    const source = `import fp from 'fastify-plugin'
import { FastifyInstance } from 'fastify'
import knex, { Knex } from 'knex'

export const autoConfig = (fastify: FastifyInstance) => {
  return {
    client: 'mysql2',
    connection: {
      host: fastify.config.MYSQL_HOST,
      user: fastify.config.MYSQL_USER,
      password: fastify.config.MYSQL_PASSWORD,
      database: fastify.config.MYSQL_DATABASE,
      port: Number(fastify.config.MYSQL_PORT)
    },
    pool: { min: 2, max: 10 }
  }
}

const knexPlugin = async (fastify: FastifyInstance) => {
  const db = knex(autoConfig(fastify))
  fastify.decorate('knex', db)
}

export default fp(knexPlugin, { name: 'knex' })
`;
    expect(scan(source)).toEqual([{ store: 'mysql', host: 'MYSQL_HOST', user: 'MYSQL_USER', password: 'MYSQL_PASSWORD', database: 'MYSQL_DATABASE', port: 'MYSQL_PORT', line: 6 }]);
    // Inline in knex() too, and a URL as the whole connection.
    expect(scan("import knex from 'knex';\nexport const db = knex({ client: 'mysql2', connection: { host: config.DB_HOST, database: config.DB_NAME } });\n")).toEqual([
      { store: 'mysql', host: 'DB_HOST', database: 'DB_NAME', line: 2 },
    ]);
    expect(scan("import knex from 'knex';\nexport const db = knex({ client: 'pg', connection: process.env.PG_CONNECTION_STRING });\n")).toEqual([
      { store: 'postgres', url: 'PG_CONNECTION_STRING', line: 2 },
    ]);
  });

  it('NestJS: TypeOrmModule.forRootAsync with configService.get / getOrThrow', () => {
    const source = `import { Module } from '@nestjs/common';
import { ConfigService } from '@nestjs/config';
import { TypeOrmModule } from '@nestjs/typeorm';

@Module({
  imports: [
    TypeOrmModule.forRootAsync({
      inject: [ConfigService],
      useFactory: (configService: ConfigService) => ({
        type: 'postgres',
        host: configService.get('DATABASE_HOST'),
        port: configService.get<number>('DATABASE_PORT'),
        username: configService.getOrThrow('DATABASE_USER'),
        password: configService.get('DATABASE_PASSWORD'),
        database: configService.get('DATABASE_NAME'),
        autoLoadEntities: true,
      }),
    }),
  ],
})
export class AppModule {}
`;
    expect(scan(source)).toEqual([{ store: 'postgres', host: 'DATABASE_HOST', port: 'DATABASE_PORT', user: 'DATABASE_USER', password: 'DATABASE_PASSWORD', database: 'DATABASE_NAME', line: 9 }]);
  });

  it('TypeORM DataSource and TypeOrmModule.forRoot with a url', () => {
    expect(scan("import { DataSource } from 'typeorm';\nexport const AppDataSource = new DataSource({ type: 'mysql', url: process.env.MYSQL_URL, entities: [] });\n")).toEqual([
      { store: 'mysql', url: 'MYSQL_URL', line: 2 },
    ]);
    expect(scan("TypeOrmModule.forRoot({\n  type: 'mariadb',\n  url: process.env['DB_URL'],\n});\n")).toEqual([{ store: 'mysql', url: 'DB_URL', line: 1 }]);
  });

  it('drizzle.config: dbCredentials.url by dialect (and the older driver)', () => {
    const source = "import { defineConfig } from 'drizzle-kit';\n\nexport default defineConfig({\n  schema: './src/schema.ts',\n  dialect: 'postgresql',\n  dbCredentials: { url: process.env.POSTGRES_URL! },\n});\n";
    expect(scan(source)).toEqual([{ store: 'postgres', url: 'POSTGRES_URL', line: 3 }]);
    expect(scan("export default { driver: 'mysql2', dbCredentials: { uri: process.env.MYSQL_URI } };\n")).toEqual([{ store: 'mysql', url: 'MYSQL_URI', line: 1 }]);
  });

  it('postgres.js with a URL; a client of unknown origin takes the package\'s one relational database', () => {
    expect(scan("import postgres from 'postgres';\nexport const sql = postgres(process.env.DATABASE_URL!);\n")).toEqual([{ store: 'postgres', url: 'DATABASE_URL', line: 2 }]);
    const unknown = "// The driver is handed in: its module is not known here.\nmodule.exports = (driver) => driver.createPool({ host: process.env.DB_HOST });\n";
    expect(scan(unknown, ['mysql', 'redis'])).toEqual([{ store: 'mysql', host: 'DB_HOST', line: 2 }]);
    // Two relational databases, or none: the kind is not guessed.
    expect(scan(unknown, ['mysql', 'postgres'])).toEqual([]);
  });

  it('Prisma: env("X") of the datasource, its kind from the provider', () => {
    const schema = 'generator client {\n  provider = "prisma-client-js"\n}\n\ndatasource db {\n  provider = "postgresql"\n  url      = env("POSTGRES_PRISMA_URL")\n}\n';
    expect(prismaConnection(schema)).toEqual({ store: 'postgres', url: 'POSTGRES_PRISMA_URL', line: 7 });
    expect(prismaConnection('datasource db {\n  provider = "mongodb"\n  url = env("MONGO_URL")\n}\n')).toBeUndefined();
  });

  it('only names that can be an environment variable; config.X / env.X only when spelt like one', () => {
    const expr = (text: string) => {
      const { sf } = parseSource('x.ts', `(${text});`);
      const statement = sf.statements[0];
      return statement && ts.isExpressionStatement(statement) ? envNameOf(statement.expression) : undefined;
    };
    expect(expr("process.env['DB-HOST']")).toBeUndefined();
    expect(expr("process.env['x\\'); evil(']")).toBeUndefined();
    expect(expr("configService.get('database.host')")).toBeUndefined();
    expect(expr('config.database')).toBeUndefined();
    expect(expr('settings.get("DB_HOST")')).toBeUndefined();
    expect(expr('this.config.DB_HOST')).toBe('DB_HOST');
    expect(expr("process.env.DB_PORT ?? '5432'")).toBe('DB_PORT');
    expect(expr("parseInt(process.env.DB_PORT || '5432', 10)")).toBe('DB_PORT');
    // A literal host, or a value computed some other way, is no connection setting.
    expect(scan("import { Pool } from 'pg';\nnew Pool({ host: 'localhost', database: 'app' });\n")).toEqual([]);
  });
});

describe('inspect: Sequelize and URLs built in template strings', () => {
  it('new Sequelize(process.env.X, { dialect }): the URL variable, its kind from the dialect or the package', () => {
    const source = "import { Sequelize } from 'sequelize';\nexport const sequelize = new Sequelize(process.env.DATABASE_URL!, { dialect: 'postgres', logging: false });\n";
    expect(CONNECTION_MENTIONS.test(source)).toBe(true);
    expect(scan(source)).toEqual([{ store: 'postgres', url: 'DATABASE_URL', line: 2 }]);
    // No dialect: the URL variable does not say, so the package's one relational database does.
    const bare = "const { Sequelize } = require('sequelize');\nmodule.exports = new Sequelize(process.env.DB_URL);\n";
    expect(scan(bare, ['mysql'])).toEqual([{ store: 'mysql', url: 'DB_URL', line: 2 }]);
    expect(scan(bare, [])).toEqual([]);
  });

  it('new Sequelize(database, username, password, { host, port, dialect }), through names bound once in the file', () => {
    const source = `import { Sequelize } from 'sequelize';
const { DB_NAME, DB_USER } = process.env;
const password = process.env.DB_PASSWORD;
const host = process.env.DB_HOST ?? 'localhost';
const port = Number(process.env.DB_PORT);
export const sequelize = new Sequelize(DB_NAME!, DB_USER!, password, { host, port, dialect: 'postgres' });
`;
    expect(scan(source)).toEqual([{ store: 'postgres', database: 'DB_NAME', user: 'DB_USER', password: 'DB_PASSWORD', host: 'DB_HOST', port: 'DB_PORT', line: 6 }]);
    // No host: Sequelize's default (localhost), which the pool's default also is.
    expect(scan("new Sequelize(process.env.PGDB, process.env.PGU, process.env.PGP, { dialect: 'mariadb' });\n")).toEqual([{ store: 'mysql', database: 'PGDB', user: 'PGU', password: 'PGP', line: 1 }]);
    // A literal host elsewhere than the default: the pool could not follow it, so nothing is said.
    expect(scan("new Sequelize(process.env.DB, process.env.U, process.env.P, { host: 'db.internal', dialect: 'postgres' });\n")).toEqual([]);
    // config.host is no variable (config.X is read as one only when spelt like one), destructured or not.
    expect(scan("const { host, DB_NAME } = config;\nnew Sequelize(DB_NAME, 'me', 'pw', { host, dialect: 'postgres' });\n")).toEqual([]);
    expect(scan("const { DB_HOST: host, DB_NAME } = config;\nnew Sequelize(DB_NAME, 'me', 'pw', { host, dialect: 'postgres' });\n")).toEqual([{ store: 'postgres', host: 'DB_HOST', database: 'DB_NAME', line: 2 }]);
    // A name also bound as a parameter is not known at its use.
    expect(scan("const host = process.env.DB_HOST;\nfunction open(host: string) { return new Sequelize('app', 'me', 'pw', { host, dialect: 'postgres' }); }\n")).toEqual([]);
  });

  it('new Sequelize({ database, username, password, host, dialect }) and sequelize-cli\'s config.js', () => {
    expect(scan("new Sequelize({ database: process.env.DB_NAME, username: process.env.DB_USER, password: process.env.DB_PASS, host: process.env.DB_HOST, dialect: 'mysql' });\n")).toEqual([
      { store: 'mysql', database: 'DB_NAME', user: 'DB_USER', password: 'DB_PASS', host: 'DB_HOST', line: 1 },
    ]);
    const config = `module.exports = {
  development: { username: 'root', password: null, database: 'app_dev', host: '127.0.0.1', dialect: 'postgres' },
  production: { use_env_variable: 'DATABASE_URL', dialect: 'postgres' },
  staging: { username: process.env.STAGING_USER, host: process.env.STAGING_HOST, dialect: 'postgres' },
};
`;
    expect(CONNECTION_MENTIONS.test(config)).toBe(true);
    expect(scan(config)).toEqual([
      { store: 'postgres', url: 'DATABASE_URL', line: 3 },
      { store: 'postgres', user: 'STAGING_USER', host: 'STAGING_HOST', line: 4 },
    ]);
  });

  it('sequelize-cli\'s config/config.json: use_env_variable only, its kind from the dialect', () => {
    const json = JSON.stringify(
      {
        development: { username: 'root', password: null, database: 'db_dev', host: '127.0.0.1', dialect: 'mysql' },
        test: { username: 'root', database: 'db_test', host: '127.0.0.1', dialect: 'mysql' },
        production: { use_env_variable: 'JAWSDB_URL', dialect: 'mysql' },
      },
      null,
      2,
    );
    expect(sequelizeConfigConnections(json, [])).toEqual([{ store: 'mysql', url: 'JAWSDB_URL', line: 16 }]);
    expect(sequelizeConfigConnections('{ "production": { "use_env_variable": "URL" } }', ['postgres'])).toEqual([{ store: 'postgres', url: 'URL', line: 1 }]);
    expect(sequelizeConfigConnections('{ "production": { "use_env_variable": "A; rm -rf /", "dialect": "postgres" } }', [])).toEqual([]);
    expect(sequelizeConfigConnections('{ "production": { "use_env_variable": "URL", "dialect": "sqlite" } }', ['postgres'])).toEqual([]);
    expect(sequelizeConfigConnections('not json', ['postgres'])).toEqual([]);
  });

  it('.sequelizerc moves the config: path.resolve / path.join of literals, never outside the package', () => {
    expect(sequelizercConfigPath("const path = require('path');\nmodule.exports = {\n  'config': path.resolve('db', 'database.json'),\n  'models-path': path.resolve('db', 'models'),\n};\n")).toBe('db/database.json');
    expect(sequelizercConfigPath("module.exports = { config: path.join(__dirname, 'src/config/sequelize.json') };")).toBe('src/config/sequelize.json');
    expect(sequelizercConfigPath("module.exports = { config: './config/db.js' };")).toBe('config/db.js');
    expect(sequelizercConfigPath("module.exports = { config: path.resolve('..', '..', 'secrets.json') };")).toBeUndefined();
    expect(sequelizercConfigPath("module.exports = { config: path.resolve(root, 'db.json') };")).toBeUndefined();
    expect(sequelizercConfigPath("module.exports = { 'seeders-config': 'x.json' };")).toBeUndefined();
  });

  it('a URL template: each ${} in a part\'s position is that part\'s variable; the kind from the scheme', () => {
    const source = "import { Pool } from 'pg';\nconst port = 5432;\nexport const pool = new Pool({\n  connectionString: `postgres://${process.env.PGUSER}:${process.env.PGPASSWORD}@${process.env.PGHOST}:${port}/${env.DB}`,\n});\n";
    // The port is a local number, no variable: left to the default.
    expect(scan(source)).toEqual([{ store: 'postgres', user: 'PGUSER', password: 'PGPASSWORD', host: 'PGHOST', database: 'DB', line: 3 }]);
    // Held in a constant first, the scheme naming MySQL for a client whose module is not known.
    const held = "const url = `mysql://${process.env.MYSQL_USER}@${process.env.MYSQL_HOST}:${process.env.MYSQL_PORT}/${process.env.MYSQL_DB}?ssl=true`;\nexport const pool = driver.createPool(url);\n";
    expect(scan(held)).toEqual([{ store: 'mysql', user: 'MYSQL_USER', host: 'MYSQL_HOST', port: 'MYSQL_PORT', database: 'MYSQL_DB', line: 2 }]);
    // Sequelize, knex and postgres.js take the same templates.
    expect(scan("new Sequelize(`postgresql://${process.env.U}:${process.env.P}@${process.env.H}/${process.env.D}`, { logging: false });\n")).toEqual([
      { store: 'postgres', user: 'U', password: 'P', host: 'H', database: 'D', line: 1 },
    ]);
    expect(scan("knex({ client: 'pg', connection: `postgres://${process.env.DB_USER}@${process.env.DB_HOST}/app` });\n")).toEqual([{ store: 'postgres', user: 'DB_USER', host: 'DB_HOST', line: 1 }]);
    expect(scan("import postgres from 'postgres';\nexport const sql = postgres(`${process.env.DATABASE_URL}?sslmode=require`);\n")).toEqual([{ store: 'postgres', url: 'DATABASE_URL', line: 2 }]);
    // A part escaped for the URL is still that variable.
    expect(scan("import { Pool } from 'pg';\nnew Pool({ connectionString: `postgres://${process.env.U}:${encodeURIComponent(process.env.P!)}@${process.env.H}/app` });\n")).toEqual([
      { store: 'postgres', user: 'U', password: 'P', host: 'H', line: 2 },
    ]);
  });

  it('a template part that is not one variable stays out, and a literal host gives nothing', () => {
    // Code text in a placeholder never becomes a name: only envNameOf's identifiers.
    expect(scan("import { Pool } from 'pg';\nnew Pool({ connectionString: `postgres://${getUser()}:${process.env['P\\'X']}@${process.env.H}/${'db' + suffix}` });\n")).toEqual([
      { store: 'postgres', host: 'H', line: 2 },
    ]);
    expect(scan("import { Pool } from 'pg';\nnew Pool({ connectionString: `postgres://${process.env.U}@${process.env.H}x/db` });\n")).toEqual([]);
    expect(scan("import { Pool } from 'pg';\nnew Pool({ connectionString: `postgres://${process.env.U}:${process.env.P}@localhost:5432/app` });\n")).toEqual([]);
    // Another kind of server's URL is no database connection.
    expect(scan("new Pool({ connectionString: `redis://${process.env.H}` });\n")).toEqual([]);
  });
});

describe('one connection per kind', () => {
  it('the app\'s own client before a seed or migration script\'s, then by file and line; only kinds the stack has', () => {
    const seed = { store: 'postgres' as const, url: 'ADMIN_DATABASE_URL', file: 'scripts/seed.ts', line: 2 };
    const app = { store: 'postgres' as const, url: 'POSTGRES_URL', file: 'src/db.ts', line: 5 };
    const earlier = { ...app, url: 'PG_URL', line: 1 };
    const maria = { store: 'mysql' as const, host: 'MYSQL_HOST', file: 'src/legacy.ts', line: 1 };
    expect(pickConnections([seed, app, earlier, maria], ['postgres', 'redis'])).toEqual([earlier]);
    expect(pickConnections([seed, maria], ['mysql', 'postgres'])).toEqual([maria, seed]);
  });
});

describe('inspect --json: stack.connections, for the store\'s own database kind only', () => {
  const dirs: string[] = [];
  afterAll(async () => {
    for (const dir of dirs) await rm(dir, { recursive: true, force: true });
  });

  async function project(files: Record<string, string>): Promise<string> {
    const dir = await mkdtemp(path.join(os.tmpdir(), 'dbconn-inspect-'));
    dirs.push(dir);
    for (const [rel, text] of Object.entries(files)) {
      await mkdir(path.dirname(path.join(dir, rel)), { recursive: true });
      await writeFile(path.join(dir, rel), text);
    }
    return dir;
  }

  it('a fastify + knex + mysql2 project: the MYSQL_* variables with their file:line', async () => {
    const dir = await project({
      'package.json': JSON.stringify({ name: 'demo', dependencies: { fastify: '5.0.0', knex: '3.0.0', mysql2: '3.0.0', ioredis: '5.0.0' } }),
      'src/plugins/knex.ts': "import knex from 'knex';\n\nexport default async function plugin(fastify: any) {\n  fastify.decorate('knex', knex({\n    client: 'mysql2',\n    connection: { host: fastify.config.MYSQL_HOST, port: Number(fastify.config.MYSQL_PORT), user: fastify.config.MYSQL_USER, password: fastify.config.MYSQL_PASSWORD, database: fastify.config.MYSQL_DATABASE },\n  }));\n}\n",
      // A PostgreSQL client in a project whose database is MySQL is not the store's kind.
      'src/legacy.ts': "import { Pool } from 'pg';\nexport const legacy = new Pool({ connectionString: process.env.LEGACY_PG_URL });\n",
    });
    const inspection = await inspectProject(dir);
    expect(inspection.stack.connections).toEqual([
      { store: 'mysql', host: 'MYSQL_HOST', port: 'MYSQL_PORT', user: 'MYSQL_USER', password: 'MYSQL_PASSWORD', database: 'MYSQL_DATABASE', file: 'src/plugins/knex.ts', line: 4 },
    ]);
    // apply finds the same without an inspection at hand.
    expect(await findStoreConnection(dir, 'mysql')).toEqual(inspection.stack.connections?.[0]);
    expect(await findStoreConnection(dir, 'postgres')).toMatchObject({ url: 'LEGACY_PG_URL', file: 'src/legacy.ts', line: 2 });
  });

  it('a Sequelize project: sequelize-cli\'s JSON config where .sequelizerc puts it, in inspect and for apply', async () => {
    const dir = await project({
      'package.json': JSON.stringify({ name: 'app', dependencies: { express: '4.0.0', sequelize: '6.0.0', pg: '8.0.0' } }),
      '.sequelizerc': "const path = require('path');\nmodule.exports = { config: path.resolve('db', 'database.json') };\n",
      'db/database.json': JSON.stringify({ development: { username: 'me', database: 'app', host: '127.0.0.1', dialect: 'postgres' }, production: { use_env_variable: 'HEROKU_POSTGRESQL_URL', dialect: 'postgres' } }, null, 2),
      'src/index.ts': "import express from 'express';\nexport const app = express();\n",
    });
    const expected = { store: 'postgres', url: 'HEROKU_POSTGRESQL_URL', file: 'db/database.json', line: 9 };
    expect((await inspectProject(dir)).stack.connections).toEqual([expected]);
    expect(await findStoreConnection(dir, 'postgres')).toEqual(expected);
  });

  it('a Prisma project: the datasource url; none at all leaves the stack as it was', async () => {
    const dir = await project({
      'package.json': JSON.stringify({ name: 'app', dependencies: { '@prisma/client': '5.0.0', express: '4.0.0' } }),
      'prisma/schema.prisma': 'datasource db {\n  provider = "postgresql"\n  url      = env("POSTGRES_PRISMA_URL")\n}\n',
      'src/index.ts': "import express from 'express';\nexport const app = express();\n",
    });
    expect((await inspectProject(dir)).stack.connections).toEqual([{ store: 'postgres', url: 'POSTGRES_PRISMA_URL', file: 'prisma/schema.prisma', line: 3 }]);
    const bare = await project({ 'package.json': JSON.stringify({ name: 'app', dependencies: { express: '4.0.0', pg: '8.0.0' } }), 'src/index.ts': 'export {};\n' });
    expect('connections' in (await inspectProject(bare)).stack).toBe(false);
  });
});
