import { lstatSync } from 'node:fs';
import path from 'node:path';
import { isMissing } from './atomic-file.js';
import { storeError } from './errors.js';
import { shownPath } from './scope-path.js';

/**
 * Folders memloom finds memories by (`users/`, `users/alice/`, `memory/`,
 * a month folder `202403/`) are never followed when they are symbolic links,
 * as Markdown files are not: the memories behind a link are not read, so a
 * write through it would land where the store does not look, and two links
 * to one folder would make two scopes share their files.
 */
export const FOLDER_LINK_MESSAGE =
  'is a symbolic link to a folder; memloom does not read or write memories through links (the memories behind it are not read). Put the folder itself here';

/** The first folder below `root`, down to `directory`, that is a symbolic link; undefined when none is. */
export function linkedFolder(root: string, directory: string): string | undefined {
  const relative = path.relative(root, directory);
  if (relative === '' || relative.startsWith('..') || path.isAbsolute(relative)) return undefined;
  let current = root;
  for (const segment of relative.split(path.sep)) {
    current = path.join(current, segment);
    try {
      if (lstatSync(current).isSymbolicLink()) return current;
    } catch (error) {
      // A missing folder is made by the write, as a plain folder; so are those below it.
      if (isMissing(error)) return undefined;
      throw error;
    }
  }
  return undefined;
}

/** Refuse a write into `directory` that would go through a linked folder: STORE_CORRUPT naming the link, like a linked file. */
export function assertNotLinked(root: string, directory: string): void {
  const link = linkedFolder(root, directory);
  if (link === undefined) return;
  const shown = shownPath(root, link);
  throw storeError('STORE_CORRUPT', `${shown}:1: ${FOLDER_LINK_MESSAGE} (the link is left as it is) before memloom writes to it again`, {
    path: shown,
    line: 1,
  });
}
