import type { InspectionInput } from '../model/index.js';
import type { FormattedFile } from './format.js';
import { readInside } from './safePath.js';

/**
 * The part of init's inspection the document depends on (protection the code already has), kept as a managed file
 * so `generate` (which never runs the slow inspector) renders exactly what `init` rendered. `init` refreshes it.
 */
export const SNAPSHOT_PATH = '.idempotency-builder/existing-protection.json';

type Finding = InspectionInput['findings'][number] & { hasProviderKey?: boolean };

const credited = (finding: Finding) => finding.kind === 'existing-idempotency' || (finding.kind === 'payment' && finding.hasProviderKey === true);

/** Only the fields buildDesign reads, sorted, so the file is byte-identical for the same findings. */
export function snapshotOf(inspection: InspectionInput): InspectionInput {
  const findings = (inspection.findings as readonly Finding[])
    .filter(credited)
    .map((f) => ({
      kind: f.kind,
      id: f.id,
      file: f.file,
      line: f.line,
      ...(f.mechanism !== undefined ? { mechanism: f.mechanism } : {}),
      ...(f.detail !== undefined ? { detail: f.detail } : {}),
      ...(f.kind === 'payment' ? { hasProviderKey: true } : {}),
    }))
    .sort((a, b) => (a.file < b.file ? -1 : a.file > b.file ? 1 : a.line - b.line || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0)));
  return { findings };
}

/** The managed file for a snapshot; none when the code had nothing to credit. */
export function snapshotFile(snapshot: InspectionInput): FormattedFile[] {
  if (snapshot.findings.length === 0) return [];
  const body = { $comment: 'Written by idempotency-builder init: protection found in the code, credited in the design. Re-run init to refresh.', findings: snapshot.findings };
  return [{ path: SNAPSHOT_PATH, class: 'managed', contents: `${JSON.stringify(body, null, 2)}\n`, formatted: true }];
}

const isFinding = (value: unknown): value is Finding => {
  const f = value as Partial<Finding> | null;
  return typeof f === 'object' && f !== null && typeof f.kind === 'string' && typeof f.id === 'string' && typeof f.file === 'string' && typeof f.line === 'number' &&
    (f.mechanism === undefined || typeof f.mechanism === 'string') && (f.detail === undefined || typeof f.detail === 'string');
};

/** The snapshot on disk (never through a link); an unreadable or hand-broken one counts as empty. */
export async function readSnapshot(root: string): Promise<InspectionInput> {
  const text = await readInside(root, SNAPSHOT_PATH);
  if (text === undefined) return { findings: [] };
  try {
    const raw = JSON.parse(text) as { findings?: unknown };
    return snapshotOf({ findings: Array.isArray(raw.findings) ? raw.findings.filter(isFinding) : [] });
  } catch {
    return { findings: [] };
  }
}
