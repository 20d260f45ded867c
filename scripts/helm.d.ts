export declare const helmVersion: string;
export declare function helmBinary(): string;
export declare function ensureHelm(options?: {
  quiet?: boolean;
}): { binary: string } | { unavailable: string };
