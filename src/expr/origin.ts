/** Where the expression text starts in its policy file (1-based line and column of the first character inside
 *  `@(` / `@{`). Error positions are this origin plus the offset inside the text. */
export interface SourceOrigin {
  file: string;
  line: number;
  column: number;
}
