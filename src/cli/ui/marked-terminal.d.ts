// marked-terminal ships no types (and @types/marked-terminal pins a marked older than ours): what src/cli/ui/markdown.ts uses.
declare module 'marked-terminal' {
  import type { MarkedExtension } from 'marked'
  export function markedTerminal(options?: Record<string, unknown>, highlightOptions?: Record<string, unknown>): MarkedExtension
}
