/**
 * A YAML flow scalar quoted as prettier prints it in the house style (singleQuote), so emitted YAML needs no
 * formatting pass: single quotes unless the text holds a single quote and no double quote; double quotes (JSON
 * escapes, which YAML reads alike) whenever the text needs an escape other than `\"` (control characters, backslash).
 * test/emit/houseStyleEmitted.test.ts checks every emitted YAML file against prettier.
 */
export function yamlString(text: string): string {
  const json = JSON.stringify(text);
  if (/\\[^"]/.test(json.slice(1, -1))) return json;
  if (text.includes('"')) return `'${text.replace(/'/g, "''")}'`;
  return text.includes("'") ? json : `'${text}'`;
}
