// Helm for the chart's tests (examples/helm): built from its Go module with `go install`, since the machines the
// tests run on reach the Go module proxy but no download site for a prebuilt binary. Kept in the user's cache folder
// (one folder per version, like npm's and pip's caches), so it is built once per machine, not once per clone: a
// build takes 10–15 minutes on a 2-core machine, where Go's caches make a rebuild quicker but not quick.
// Plain JavaScript, like setup.js, which calls it for `npm test`.
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, renameSync, rmSync } from 'node:fs';
import { homedir } from 'node:os';
import path from 'node:path';

/** The helm release built; one the Go module proxy serves (helm.sh/helm/v3). */
export const helmVersion = 'v3.22.0';

/**
 * Where the binary is kept: `$XDG_CACHE_HOME/portcullis/helm-<version>/helm` (~/.cache by default), or under
 * PORTCULLIS_HELM_DIR when set.
 * @returns {string}
 */
export function helmBinary() {
  const cache = process.env.XDG_CACHE_HOME || path.join(homedir(), '.cache');
  const folder = process.env.PORTCULLIS_HELM_DIR ?? path.join(cache, 'portcullis', `helm-${helmVersion}`);
  return path.join(folder, 'helm');
}

/** Go's words for a network it cannot reach (proxy, DNS, connection), as opposed to a build that failed. */
const offline =
  /dial tcp|no such host|connection refused|i\/o timeout|network is unreachable|TLS handshake timeout|proxy\.golang\.org.*(?:40[0-9]|50[0-9])/i;

/**
 * The path of a helm binary, building it when absent. `{ unavailable }` when it cannot be built here for a reason
 * outside the project (no Go toolchain, or no network to fetch the module): the caller says so. A build that fails
 * otherwise throws, with Go's output.
 * @param {{ quiet?: boolean }} [options]
 * @returns {{ binary: string } | { unavailable: string }}
 */
export function ensureHelm({ quiet = false } = {}) {
  const binary = helmBinary();
  if (existsSync(binary)) return { binary };
  let go;
  try {
    go = execFileSync('go', ['env', 'GOROOT'], { encoding: 'utf8' }).trim() && 'go';
  } catch {
    return {
      unavailable: `no Go toolchain on PATH to build helm ${helmVersion} (go install helm.sh/helm/v3/cmd/helm@${helmVersion})`,
    };
  }
  const folder = path.dirname(binary);
  const building = `${folder}.building`;
  rmSync(building, { recursive: true, force: true });
  mkdirSync(building, { recursive: true });
  if (!quiet) console.log(`setup: building helm ${helmVersion} from its Go module (once per machine)`);
  try {
    execFileSync(go, ['install', `helm.sh/helm/v3/cmd/helm@${helmVersion}`], {
      cwd: building,
      env: { ...process.env, GOBIN: building, CGO_ENABLED: '0' },
      stdio: ['ignore', 'pipe', 'pipe'],
      encoding: 'utf8',
      maxBuffer: 64 * 1024 * 1024,
    });
  } catch (error) {
    rmSync(building, { recursive: true, force: true });
    const output = `${error.stdout ?? ''}${error.stderr ?? ''}`;
    if (offline.test(output))
      return {
        unavailable: `the Go module proxy cannot be reached to build helm ${helmVersion}: ${output.trim().split('\n').at(-1)}`,
      };
    throw new Error(`building helm ${helmVersion} failed:\n${output}`);
  }
  rmSync(folder, { recursive: true, force: true });
  renameSync(building, folder);
  return { binary };
}
