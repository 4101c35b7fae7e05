import { AppError } from "../../lib/errors.js";

/**
 * Secret references, Infisical's syntax: `${KEY}` names a secret in the same folder, and
 * `${env.a.b.KEY}` names KEY in folder `/a/b` of environment `env` (`${env.KEY}` is that env's root).
 *
 * - Each referenced folder is loaded at most once per request (the resolver caches).
 * - A cycle, or nesting deeper than MAX_DEPTH, leaves the reference text as it is instead of looping.
 * - A reference to a secret that does not exist expands to "".
 * - Reading a referenced secret needs read permission on it, as Infisical checks: otherwise 403.
 */
export const MAX_REFERENCE_DEPTH = 10;
const REF = /\$\{([a-zA-Z0-9-_.]+)\}/g;

export type FolderValues = (environment: string, path: string) => Promise<Map<string, string>>;

export type ExpandContext = {
  /** Shared values of a folder (cached by the caller). */
  values: FolderValues;
  canRead: (environment: string, path: string, key: string) => boolean;
};

export const hasReferences = (v: string) => v.includes("${");

function parseRef(ref: string, env: string, path: string) {
  const parts = ref.split(".");
  if (parts.length === 1) return { env, path, key: ref };
  const key = parts[parts.length - 1] ?? "";
  const middle = parts.slice(1, -1);
  return { env: parts[0] ?? env, path: middle.length ? `/${middle.join("/")}` : "/", key };
}

export async function expandReferences(
  value: string,
  at: { environment: string; secretPath: string; key: string },
  ctx: ExpandContext,
): Promise<string> {
  const walk = async (v: string, env: string, path: string, stack: string[]): Promise<string> => {
    if (!hasReferences(v)) return v;
    let out = "";
    let last = 0;
    for (const m of v.matchAll(REF)) {
      const ref = parseRef(m[1] ?? "", env, path);
      out += v.slice(last, m.index);
      last = (m.index ?? 0) + m[0].length;
      const id = `${ref.env}:${ref.path}:${ref.key}`;
      if (stack.includes(id) || stack.length > MAX_REFERENCE_DEPTH) {
        out += m[0];
        continue;
      }
      if (!ctx.canRead(ref.env, ref.path, ref.key)) {
        throw new AppError(
          "FORBIDDEN",
          `You are attempting to reference secret named ${ref.key} from environment ${ref.env} in path ${ref.path} which you do not have access to.`,
        );
      }
      const target = (await ctx.values(ref.env, ref.path)).get(ref.key);
      out += target === undefined ? "" : await walk(target, ref.env, ref.path, [...stack, id]);
    }
    return out + v.slice(last);
  };
  return walk(value, at.environment, at.secretPath, [`${at.environment}:${at.secretPath}:${at.key}`]);
}
