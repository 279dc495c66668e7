/** verify: links and anchors, self-containment, diagrams, spec sections, deliverables and constraints. */
export { assertDocumentVerified } from './assertDocumentVerified.js';
export { verifyDocument, type VerifyDocumentOptions } from './verifyDocument.js';
export { verifyPath } from './verifyPath.js';
export { formatFinding, type DocumentFile, type Finding } from './types.js';
