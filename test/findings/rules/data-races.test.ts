import { readThenCreate } from '../../../src/findings/rules/read-then-create.js';
import { ruleTester } from '../ruleTester.js';

const createOrRetrieve = (createOptions: string) => `import { stripe } from './stripe';
import { supabase } from './supabase';
export async function createOrRetrieveCustomer(uuid: string, email: string) {
  const { data } = await supabase.from('customers').select('stripe_customer_id').eq('id', uuid).maybeSingle();
  if (data?.stripe_customer_id) return data.stripe_customer_id;
  const existing = await stripe.customers.list({ email });
  if (existing.data.length) return existing.data[0].id;
  const customer = await stripe.customers.create({ email, metadata: { supabaseUUID: uuid } }${createOptions});
  await supabase.from('customers').upsert({ id: uuid, stripe_customer_id: customer.id });
  return customer.id;
}
`;

const prismaFindOrCreate = `import { prisma } from './db';
export async function ensureAccount(email: string) {
  const found = await prisma.account.findFirst({ where: { email } });
  if (found) return found;
  return prisma.account.create({ data: { email } });
}
`;

// The shape of javieraviles/node-typescript-koa-rest@3233861 (src/controller/user.ts): TypeORM 0.2 repositories.
const typeormSignUp = `import { getManager } from 'typeorm';
import { User } from './entity/user';
export async function createUser(ctx: any) {
  const userRepository = getManager().getRepository(User);
  const user = new User();
  user.email = ctx.request.body.email;
  if (await userRepository.findOne({ email: user.email })) {
    ctx.status = 400;
  } else {
    ctx.body = await userRepository.save(user);
  }
}
export async function updateUser(ctx: any) {
  const userRepository = getManager().getRepository(User);
  const user = new User();
  user.id = +ctx.params.id;
  if (await userRepository.findOne(user.id)) ctx.body = await userRepository.save(user);
}
`;
const typeormEntity = (emailColumn: string, classDecorators = '') => `import { Column, Entity, PrimaryGeneratedColumn } from 'typeorm';
@Entity()${classDecorators}
export class User {
  @PrimaryGeneratedColumn()
  id: number;

  ${emailColumn}
  email: string;
}
`;

// The shape of Acosta-gh/Headless-E-commerce-…-MercadoPago@496a2fb (server/services/database.service.js, models/usuario.model.js).
const sequelizeSeed = `const { Usuario } = require('../models');
async function seedAdminUser(email) {
  const existing = await Usuario.findOne({ where: { email } });
  if (existing) return;
  await Usuario.create({ email, admin: true });
}
module.exports = { seedAdminUser };
`;
// async-labs/saas@4b27b6a (server/models/User.ts, EmailTemplate.ts, Invitation.ts): Mongoose schemas declare the unique fields.
const mongooseSignUp = `import User from './models/user';
export async function signUp(email: string) {
  const found = await User.findOne({ email }).setOptions({ lean: true });
  if (found) return found;
  return User.create({ email });
}
`;
const mongooseUser = (emailOptions: string, after = '') => `import * as mongoose from 'mongoose';
const mongoSchema = new mongoose.Schema({
  email: { type: String, required: true${emailOptions} },
  slug: { type: String, unique: true },
});
${after}const User = mongoose.model('User', mongoSchema);
export default User;
`;
const sequelizeModel = (emailOptions: string) => `module.exports = (sequelize, DataTypes) => {
  class Usuario extends Model {}
  Usuario.init({
    nombre: { type: DataTypes.STRING },
    email: {
      type: DataTypes.STRING,
      ${emailOptions}
      validate: { isEmail: { msg: 'invalid' } },
    },
  }, { sequelize, modelName: 'Usuario' });
  return Usuario;
};
`;

// The shape of fastify/demo@1f50cc1 (src/plugins/app/tasks/tasks-repository.ts): one factory, one method per query.
const knexRepository = (create: string) => `export function createRepository(fastify) {
  const knex = fastify.knex;
  return {
    async paginate(q) {
      return fastify.knex('tasks').select('*').where({ author_id: q.author_id });
    },
    async create(newTask) {
${create}
    },
  };
}
`;

/** A payment gateway's notification receiver: is the transaction known, else record it (inside a transaction). */
const gatewayReceiver = (data: string) => `export async function receiver(prisma: any, body: any) {
  const known = await prisma.paymentTransaction.findUnique({ where: { id: body.id } });
  if (known) throw new Error('Payment transaction already exists');
  await prisma.$transaction(async (tx: any) => {
    await tx.paymentTransaction.create({ data: { ${data} } });
  });
}
`;

ruleTester(readThenCreate, {
  valid: [
    { name: 'knex: a read in one method of a factory, the insert in a sibling method', files: { 'src/tasks-repository.ts': knexRepository("      const [id] = await knex('tasks').insert(newTask);\n      return id;") } },
    { name: 'Sequelize: email unique in the model (options nest)', files: { 'src/seed.js': sequelizeSeed, 'src/models/usuario.model.js': sequelizeModel('unique: true,') } },
    { name: 'Sequelize: sequelize.define with a unique column', files: { 'src/seed.js': sequelizeSeed, 'src/models/usuario.model.js': "module.exports = (sequelize, DataTypes) => sequelize.define('Usuario', { email: { type: DataTypes.STRING, unique: true } });\n" } },
    {
      // @medusajs/medusa@1.20.11 (services/cart.js): an address read by its id, then a new one saved when it is missing.
      name: 'a lookup by id is by the primary key: no second row for that id can appear',
      files: { 'src/addresses.ts': "export async function setAddress(addressRepository: any, id: string, input: any) {\n  const found = await addressRepository.findOne({ where: { id } });\n  if (!found) await addressRepository.save(addressRepository.create(input));\n}\n" },
    },
    {
      name: 'a lookup by the id the create writes',
      files: { 'src/payments.ts': gatewayReceiver('id: body.id, amount: body.amount'), 'prisma/schema.prisma': 'model PaymentTransaction {\n  id Int @id\n  amount Int\n}\n' },
    },
    { name: 'Mongoose: email unique in the schema', dependencies: { mongoose: '^8.0.0' }, files: { 'src/signUp.ts': mongooseSignUp, 'src/models/user.ts': mongooseUser(', unique: true') } },
    { name: 'Mongoose: schema.index(…, { unique: true }) on the lookup field', dependencies: { mongoose: '^8.0.0' }, files: { 'src/signUp.ts': mongooseSignUp, 'src/models/user.ts': mongooseUser('', "mongoSchema.index({ email: 1, slug: 1 }, { unique: true });\nmongoSchema.index({ email: 1 }, { unique: true });\n") } },
    {
      name: "Mongoose: a model made on a connection (connection.model('User', schema))",
      dependencies: { mongoose: '^8.0.0' },
      files: { 'src/signUp.ts': mongooseSignUp, 'src/models/user.ts': mongooseUser(', unique: true').replace("mongoose.model('User', mongoSchema)", "connection.model('User', mongoSchema)").replace('export default User;', 'declare const connection: mongoose.Connection;\nexport default User;') },
    },
    {
      name: 'Mongoose: the schema written inline in mongoose.model(…)',
      dependencies: { mongoose: '^8.0.0' },
      files: { 'src/signUp.ts': mongooseSignUp, 'src/models/user.ts': "import * as mongoose from 'mongoose';\nexport default mongoose.model('User', new mongoose.Schema({ email: { type: String, unique: true } }));\n" },
    },
    { name: 'TypeORM: email unique on its column', files: { 'src/users.ts': typeormSignUp, 'src/entity/user.ts': typeormEntity('@Column({ length: 100, unique: true })') } },
    { name: 'TypeORM: @Unique on the entity', files: { 'src/users.ts': typeormSignUp, 'src/entity/user.ts': typeormEntity('@Column()', "\n@Unique(['email'])") } },
    { name: 'TypeORM: unique index on the property', files: { 'src/users.ts': typeormSignUp, 'src/entity/user.ts': typeormEntity('@Index({ unique: true })\n  @Column()') } },
    { name: 'Stripe customer keyed by the user id', files: { 'src/customers.ts': createOrRetrieve(', { idempotencyKey: `customer:${uuid}` }') } },
    { name: 'unique email in the Prisma schema', files: { 'src/accounts.ts': prismaFindOrCreate, 'prisma/schema.prisma': 'model Account {\n  id    String @id\n  email String @unique\n}\n' } },
    {
      name: 'unique index in a SQL migration',
      files: { 'src/accounts.ts': prismaFindOrCreate, 'migrations/001_init.sql': 'CREATE TABLE account (id text PRIMARY KEY, email text NOT NULL);\nCREATE UNIQUE INDEX account_email ON account (email);\n' },
    },
    {
      name: 'row lock around the check',
      files: {
        'src/accounts.ts': prismaFindOrCreate.replace('const found', "await prisma.$executeRaw`SELECT pg_advisory_xact_lock(hashtext(${email}))`;\n  const found"),
        'prisma/schema.prisma': 'model Account {\n  id    String @id\n  email String\n}\n',
      },
    },
  ],
  invalid: [
    {
      // hoangnh228/nestjs-super@8e6b270 (payment.repo.ts): the gateway's transaction id is looked up, never stored.
      name: 'a lookup by an id the create never writes: every resend creates another row',
      files: { 'src/payments.ts': gatewayReceiver('amount: body.amount'), 'prisma/schema.prisma': 'model PaymentTransaction {\n  id Int @id @default(autoincrement())\n  amount Int\n}\n' },
      errors: [{ line: 5, message: /looks up `paymentTransaction` by id on line 2 .* the create does not write that id/ }],
    },
    {
      name: 'Sequelize: the lookup is under where; a named (composite) unique is not the email alone',
      files: { 'src/seed.js': sequelizeSeed, 'src/models/usuario.model.js': sequelizeModel("unique: 'email_tenant',") },
      errors: [{ line: 5, message: /seedAdminUser looks up `Usuario` on \(email\) on line 3/ }],
    },
    {
      // updateUser saves an entity whose id comes from the request: an update, not a create.
      name: 'TypeORM: a sign-up checks the email, then saves, with no unique constraint',
      files: { 'src/users.ts': typeormSignUp, 'src/entity/user.ts': typeormEntity('@Column({ length: 100 })') },
      errors: [{ line: 10, message: /createUser looks up `user` on \(email\) on line 7 and creates it here when missing/, severity: 'warning' }],
    },
    {
      name: 'Stripe customer created after a list, no key',
      files: { 'src/customers.ts': createOrRetrieve('') },
      errors: [{ line: 8, message: /createOrRetrieveCustomer looks up a Stripe customer .* on line 6 and creates it here when missing, with no idempotency key/ }],
    },
    {
      name: 'email not unique in the schema',
      files: { 'src/accounts.ts': prismaFindOrCreate, 'prisma/schema.prisma': 'model Account {\n  id    String @id\n  email String\n}\n' },
      errors: [{ line: 5, message: /`account` on \(email\) on line 3/, severity: 'warning' }],
    },
    {
      name: 'create one call away in the same file',
      files: {
        'src/customers.ts': `import { stripe } from './stripe';
const createInStripe = async (email: string) => (await stripe.customers.create({ email })).id;
export async function ensureCustomer(email: string) {
  const found = await stripe.customers.list({ email, limit: 1 });
  return found.data[0]?.id ?? createInStripe(email);
}
`,
      },
      errors: [{ line: 2, message: /ensureCustomer looks up a Stripe customer .* on line 4 and creates it through the call on line 5/ }],
    },
    {
      name: 'Mongoose: a field not unique in the schema, a compound index that does not cover it',
      dependencies: { mongoose: '^8.0.0' },
      files: { 'src/signUp.ts': mongooseSignUp, 'src/models/user.ts': mongooseUser('', "mongoSchema.index({ email: 1, slug: 1 }, { unique: true });\n") },
      errors: [{ line: 5, message: /looks up `User` on \(email\) on line 3 .* no unique constraint on those columns/, severity: 'warning' }],
    },
    { name: 'no schema in the project: a note', files: { 'src/accounts.ts': prismaFindOrCreate }, errors: [{ line: 5, severity: 'note' }] },
    {
      name: 'knex: knex(table) reads then inserts in the same method, the read inside a transaction callback',
      files: {
        'src/tasks-repository.ts': knexRepository(
          "      const existing = await knex.transaction(async (trx) => trx('tasks').where({ name: newTask.name }).first());\n      if (existing) return existing.id;\n      const [id] = await knex('tasks').insert(newTask);\n      return id;",
        ),
      },
      errors: [{ line: 10, message: /create looks up `tasks` on \(name\) on line 8 and creates it here when missing/, severity: 'note' }],
    },
  ],
});
