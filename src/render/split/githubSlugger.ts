import { githubSlug } from '../document/types.js';

/**
 * GitHub's heading anchors for one rendered Markdown file: the slug of the heading text, with repeats
 * numbered -1, -2 … in order (github-slugger's rule). Anchors are per file, so a split page must be
 * slugged on its own: a heading that was "overview-1" in the single file may be "overview" on its page.
 */
export interface GithubSlugger {
  slug(text: string): string;
  has(slug: string): boolean;
}

export function createGithubSlugger(): GithubSlugger {
  const occurrences = new Map<string, number>();
  return {
    slug(text: string): string {
      const base = githubSlug(text);
      let result = base;
      while (occurrences.has(result)) {
        const next = occurrences.get(base)! + 1;
        occurrences.set(base, next);
        result = `${base}-${next}`;
      }
      occurrences.set(result, 0);
      return result;
    },
    has: (slug) => occurrences.has(slug),
  };
}
