import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { inspectProject } from '../../src/inspect/index.js';
import type { EndpointFinding } from '../../src/inspect/types.js';
import { formatInspection } from '../../src/inspect/formatInspection.js';
import { actionsFromInspection } from '../../src/questions/actionsFromInspection.js';
import { summarizeInspection } from '../../src/questions/summarizeInspection.js';
import { pickCreates } from '../../src/questions/pickCreates.js';

const roots: string[] = [];
afterEach(async () => {
  await Promise.all(roots.splice(0).map((r) => rm(r, { recursive: true, force: true })));
});

async function project(files: Record<string, string>): Promise<string> {
  const root = await mkdtemp(path.join(tmpdir(), 'ib-sends-message-'));
  roots.push(root);
  for (const [rel, text] of Object.entries(files)) {
    await mkdir(path.dirname(path.join(root, rel)), { recursive: true });
    await writeFile(path.join(root, rel), text);
  }
  return root;
}

// The shape of hagopj13/node-express-boilerplate@179ae84, cut down: a route → controller → services index → e-mail
// service → nodemailer transport.
const boilerplate = (emailService: string, extra: Record<string, string> = {}) => ({
  'package.json': JSON.stringify({ name: 'api', dependencies: { express: '^4.17.1', mongoose: '^5.7.7', nodemailer: '^6.3.1' } }),
  'src/app.js': "const express = require('express');\nconst routes = require('./routes');\nconst app = express();\napp.use('/v1', routes);\nmodule.exports = app;\n",
  'src/routes/index.js': "const express = require('express');\nconst authRoute = require('./auth.route');\nconst router = express.Router();\nrouter.use('/auth', authRoute);\nmodule.exports = router;\n",
  'src/routes/auth.route.js': "const express = require('express');\nconst authController = require('../controllers/auth.controller');\nconst router = express.Router();\nrouter.post('/send-verification-email', authController.sendVerificationEmail);\nrouter.post('/profile-note', authController.saveNote);\nmodule.exports = router;\n",
  'src/controllers/auth.controller.js': "const { emailService, noteService } = require('../services');\nconst sendVerificationEmail = async (req, res) => {\n  await emailService.sendVerificationEmail(req.user.email, 'token');\n  res.status(204).send();\n};\nconst saveNote = async (req, res) => {\n  res.status(201).send(await noteService.saveNote(req.body.text));\n};\nmodule.exports = { sendVerificationEmail, saveNote };\n",
  'src/services/index.js': "module.exports.emailService = require('./email.service');\nmodule.exports.noteService = require('./note.service');\n",
  'src/services/note.service.js': "const { Note } = require('../models');\nconst saveNote = async (text) => Note.create({ text });\nmodule.exports = { saveNote };\n",
  'src/services/email.service.js': emailService,
  ...extra,
});
const helpers = "const sendEmail = async (to, subject, text) => {\n  await transport.sendMail({ to, subject, text });\n};\nconst sendVerificationEmail = async (to, token) => sendEmail(to, 'Verify', token);\nmodule.exports = { sendEmail, sendVerificationEmail };\n";

async function endpoint(root: string, id: string): Promise<EndpointFinding | undefined> {
  const { findings } = await inspectProject(root);
  return findings.find((f): f is EndpointFinding => f.kind === 'endpoint' && f.id === id);
}

describe('an endpoint whose handler reaches a message send', () => {
  it('is marked sendsMessage through the services index and a helper, and init pre-selects it ahead of a plain insert', async () => {
    const root = await project(boilerplate(`const nodemailer = require('nodemailer');\nconst transport = nodemailer.createTransport({});\n${helpers}`));
    const inspection = await inspectProject(root);
    const byId = new Map(inspection.findings.filter((f): f is EndpointFinding => f.kind === 'endpoint').map((f) => [f.id, f]));
    expect(byId.get('POST /v1/auth/send-verification-email')?.sendsMessage).toEqual(['nodemailer']);
    expect(byId.get('POST /v1/auth/profile-note')?.sendsMessage).toBeUndefined();
    const candidates = actionsFromInspection(inspection);
    const send = candidates.find((c) => c.action.name === 'sendVerificationEmail');
    expect(send?.checked).toBe(true);
    expect(send?.note).toBe('sends an e-mail through nodemailer: a duplicate would reach a person twice');
    expect(pickCreates(candidates).map((a) => a.name)).toEqual(['sendVerificationEmail', 'saveNote']);
    // What inspection learnt reaches what the user reads: `inspect` and init's summary.
    expect(formatInspection(inspection, { value: (v) => String(v), dim: (v) => v })).toMatch(/POST \/v1\/auth\/send-verification-email\s+sends an e-mail through nodemailer/);
    expect(summarizeInspection(inspection)).toContainEqual(expect.stringContaining('2 mutating endpoints (1 sending e-mail, SMS or push)'));
  });

  it('through a transport another project module exports', async () => {
    const root = await project(boilerplate(`const transport = require('../config/mailer');\n${helpers}`, {
      'src/config/mailer.js': "const nodemailer = require('nodemailer');\nmodule.exports = nodemailer.createTransport({ host: 'localhost' });\n",
    }));
    expect((await endpoint(root, 'POST /v1/auth/send-verification-email'))?.sendsMessage).toEqual(['nodemailer']);
  });

  it('not through a project object that only has a sendMail method', async () => {
    const root = await project(boilerplate(`const transport = { sendMail: async () => undefined };\n${helpers}`));
    expect((await endpoint(root, 'POST /v1/auth/send-verification-email'))?.sendsMessage).toBeUndefined();
  });
});
