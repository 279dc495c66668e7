import { createHash } from 'node:crypto';
import { rules as allRules } from './registry.js';
import { readSuppressions, suppressionFor } from './suppressions.js';
import type { CodeFinding, ProjectContext, ProjectReport, Rule, RuleReport, SourceContext } from './types.js';
import { functionLabel, innermostFunction } from './walk.js';

/**
 * Runs every rule over parsed sources and the project context: pure, deterministic (sorted by file, line, rule),
 * no disk. Suppression comments are applied here so every consumer (audit, model, document) sees the same status.
 * File by file: every file rule and scan sees a file's tree before the next file's, then `done(source)` is told
 * (audit lets the tree go); the project rules run last.
 */
export function runRules(ctx: ProjectContext, rules: readonly Rule[] = allRules, done?: (source: SourceContext) => void): CodeFinding[] {
  const out: CodeFinding[] = [];
  for (const source of ctx.sources) {
    for (const rule of rules) {
      rule.scanFile?.(source);
      if (!rule.checkFile || (rule.mentions && !rule.mentions.test(source.text))) continue;
      for (const report of rule.checkFile(source)) out.push(fromNode(rule, source, report));
    }
    done?.(source);
  }
  for (const rule of rules) if (rule.checkProject) for (const report of rule.checkProject(ctx)) out.push(fromProject(rule, report));
  const texts = new Map(ctx.sources.map((s) => [s.rel, s.text]));
  for (const finding of out) {
    const text = texts.get(finding.file) ?? ctx.auxiliary.get(finding.file);
    const suppression = text ? suppressionFor(readSuppressions(text), finding.ruleId, finding.line) : undefined;
    if (suppression?.reason) finding.suppressed = { reason: suppression.reason };
  }
  return dedupe(out).sort(compareFindings);
}

export function compareFindings(a: CodeFinding, b: CodeFinding): number {
  return a.file < b.file ? -1 : a.file > b.file ? 1 : a.line - b.line || a.column - b.column || (a.ruleId < b.ruleId ? -1 : a.ruleId > b.ruleId ? 1 : 0);
}

function fromNode(rule: Rule, source: SourceContext, report: RuleReport): CodeFinding {
  const start = report.node.getStart(source.sf);
  const pos = source.sf.getLineAndCharacterOfPosition(start);
  const evidence = source.text.split('\n')[pos.line]?.trim() ?? '';
  const fn = functionLabel(innermostFunction(report.node));
  return finish(rule, { file: source.rel, line: pos.line + 1, column: pos.character + 1, message: report.message, evidence, ...(report.fix ? { fix: report.fix } : {}), ...(report.severity ? { severity: report.severity } : {}), ...(fn ? { enclosingFunction: fn } : {}) });
}

function fromProject(rule: Rule, report: ProjectReport): CodeFinding {
  return finish(rule, { ...report, column: 1, evidence: report.evidence ?? '' });
}

function finish(rule: Rule, f: Omit<ProjectReport, 'evidence'> & { column: number; evidence: string }): CodeFinding {
  const fingerprint = createHash('sha256').update([rule.id, f.file, f.enclosingFunction ?? '', f.evidence.replace(/\s+/g, ' ')].join('\u0000')).digest('hex').slice(0, 32);
  return {
    ruleId: rule.id,
    title: rule.title,
    severity: f.severity ?? rule.severity,
    file: f.file,
    line: f.line,
    column: f.column,
    message: f.message,
    evidence: f.evidence.length > 200 ? `${f.evidence.slice(0, 197)}...` : f.evidence,
    fix: f.fix ?? rule.fix,
    docsAnchor: rule.docsAnchor,
    fingerprint,
    ...(f.enclosingFunction ? { enclosingFunction: f.enclosingFunction } : {}),
    ...(f.action ? { action: f.action } : {}),
  };
}

function dedupe(findings: CodeFinding[]): CodeFinding[] {
  const seen = new Set<string>();
  return findings.filter((f) => {
    const key = `${f.ruleId}\u0000${f.file}\u0000${f.line}\u0000${f.column}`;
    return seen.has(key) ? false : (seen.add(key), true);
  });
}
