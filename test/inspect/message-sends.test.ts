import { describe, expect, it } from 'vitest';
import { exportedHeld, messageSends } from '../../src/inspect/detectors/messageSends.js';
import { indexSource } from '../../src/inspect/parse/indexSource.js';
import { parseSource } from '../../src/inspect/parse/parseSource.js';

const sendsIn = (text: string, file = 'src/services/notify.ts') => {
  const { sf } = parseSource(file, text, { parents: false });
  const index = indexSource(sf, file);
  return messageSends(sf, index).map((m) => ({ library: m.library, channel: m.channel, operation: m.operation, line: sf.getLineAndCharacterOfPosition(m.call.getStart(sf)).line + 1, keyed: m.key !== undefined }));
};

describe('message sends: a client traced to its library, never a bare method name', () => {
  it('nodemailer: createTransport(…) then sendMail, CommonJS and ESM', () => {
    expect(sendsIn("const nodemailer = require('nodemailer');\nconst transport = nodemailer.createTransport({});\nconst sendEmail = async (to) => transport.sendMail({ to });\n")).toEqual([{ library: 'nodemailer', channel: 'email', operation: 'sendMail', line: 3, keyed: false }]);
    expect(sendsIn("import { createTransport } from 'nodemailer';\nexport class Mailer {\n  private transport = createTransport({});\n  send(to: string) { return this.transport.sendMail({ to }); }\n}\n")).toHaveLength(1);
  });

  it('SendGrid: the module is the client (send, sendMultiple)', () => {
    expect(sendsIn("import sgMail from '@sendgrid/mail';\nawait sgMail.send({ to: 'a' });\nawait sgMail.sendMultiple({ to: ['a'] });\n").map((m) => m.operation)).toEqual(['send', 'sendMultiple']);
  });

  it('Resend: emails.send and batch.send, with the idempotency key of its request options', () => {
    const found = sendsIn("import { Resend } from 'resend';\nconst resend = new Resend(process.env.KEY);\nawait resend.emails.send({ to: 'a' }, { idempotencyKey: `welcome/${id}` });\nawait resend.batch.send([{ to: 'a' }]);\n");
    expect(found.map((m) => `${m.operation} ${m.keyed}`)).toEqual(['emails.send true', 'batch.send false']);
  });

  it('Postmark: new ServerClient(…).sendEmail*', () => {
    expect(sendsIn("const postmark = require('postmark');\nconst client = new postmark.ServerClient('t');\nclient.sendEmail({});\nclient.sendEmailWithTemplate({});\n").map((m) => m.operation)).toEqual(['sendEmail', 'sendEmailWithTemplate']);
  });

  it('Mailgun: new Mailgun(FormData).client(…) then messages.create', () => {
    expect(sendsIn("import Mailgun from 'mailgun.js';\nconst mailgun = new Mailgun(FormData);\nconst mg = mailgun.client({ username: 'api', key: 'k' });\nawait mg.messages.create('example.org', { to: ['a'] });\n")).toEqual([{ library: 'mailgun', channel: 'email', operation: 'messages.create', line: 4, keyed: false }]);
  });

  it('Amazon SES v1 and v2: client.send(new SendEmailCommand(…)), not other commands', () => {
    expect(sendsIn("import { SESClient, SendEmailCommand, ListIdentitiesCommand } from '@aws-sdk/client-ses';\nconst ses = new SESClient({});\nawait ses.send(new SendEmailCommand({}));\nawait ses.send(new ListIdentitiesCommand({}));\n").map((m) => m.operation)).toEqual(['send(SendEmailCommand)']);
    expect(sendsIn("const { SESv2Client, SendEmailCommand } = require('@aws-sdk/client-sesv2');\nconst command = new SendEmailCommand({});\nclient.send(command);\n")).toHaveLength(1);
  });

  it('Twilio: twilio(sid, token).messages.create is an SMS', () => {
    expect(sendsIn("const twilio = require('twilio');\nconst client = twilio(process.env.SID, process.env.TOKEN);\nawait client.messages.create({ to: '+1', body: 'hi' });\n")).toEqual([{ library: 'twilio', channel: 'sms', operation: 'messages.create', line: 3, keyed: false }]);
    expect(sendsIn("import { Twilio } from 'twilio';\nconst sms = new Twilio('a', 'b');\nsms.messages.create({});\n")).toHaveLength(1);
  });

  it('Firebase Cloud Messaging: admin.messaging().send, getMessaging().sendEachForMulticast', () => {
    expect(sendsIn("import admin from 'firebase-admin';\nawait admin.messaging().send({ token: 't' });\n")).toEqual([{ library: 'firebase', channel: 'push', operation: 'send', line: 2, keyed: false }]);
    expect(sendsIn("import { getMessaging } from 'firebase-admin/messaging';\nconst messaging = getMessaging();\nawait messaging.sendEachForMulticast({ tokens: [] });\n")).toHaveLength(1);
  });

  it('web-push: sendNotification on the module or imported by name', () => {
    expect(sendsIn("const webpush = require('web-push');\nwebpush.sendNotification(sub, 'hi');\n").map((m) => m.channel)).toEqual(['push']);
    expect(sendsIn("import { sendNotification } from 'web-push';\nsendNotification(sub, 'hi');\n")).toHaveLength(1);
  });

  it('no match on a name alone: the project\'s own send(), sendMail() and messages.create()', () => {
    const own = "import { send } from './queue';\nconst mailer = { sendMail: async () => {} };\nsend({ to: 'a' });\nawait mailer.sendMail({});\nawait db.messages.create({ data: {} });\nawait transport.sendMail({});\nawait socket.send('x');\n";
    expect(sendsIn(own)).toEqual([]);
    // A library imported but the receiver is something else.
    expect(sendsIn("import nodemailer from 'nodemailer';\nconst transport = makeTransport();\ntransport.sendMail({});\n")).toEqual([]);
  });

  it('a client a project module exports, through the caller\'s resolver', () => {
    const lib = "const nodemailer = require('nodemailer');\nmodule.exports = nodemailer.createTransport({});\n";
    const { sf: libSf } = parseSource('src/lib/mailer.js', lib, { parents: false });
    const libIndex = indexSource(libSf, 'src/lib/mailer.js');
    const file = 'src/services/email.js';
    const { sf } = parseSource(file, "const transport = require('../lib/mailer');\nconst send = (to) => transport.sendMail({ to });\n", { parents: false });
    const found = messageSends(sf, indexSource(sf, file), (module, name) => (module === '../lib/mailer' ? exportedHeld(libSf, libIndex, name) : undefined));
    expect(found.map((m) => m.library)).toEqual(['nodemailer']);
  });
});
