/**
 * @file What a Hugging Face–style hub says of a file before it is downloaded: a HEAD of
 * `/{repo}/resolve/{revision}/{file}`, not following the redirect. Files stored with Git LFS (the weights) carry
 * `X-Linked-Etag` (their sha256) and `X-Linked-Size`; small files in git itself (config.json, tokenizer.json) carry
 * `ETag` (git's blob sha1) and `Content-Length`. Both are checked after the download (download.ts). Names are checked
 * before they go into a URL, so a catalog entry cannot point outside its repository.
 */
import type { RemoteFile } from './download'
import { DownloadError } from './errors'

/** The public hub. */
export const HUGGING_FACE_HUB = 'https://huggingface.co'

const REPO = /^[A-Za-z0-9][\w.-]{0,95}\/[A-Za-z0-9][\w.-]{0,95}$/
const FILE = /^(?!.*(^|\/)\.\.?(\/|$))[\w.-]+(\/[\w.-]+)*$/
const REVISION = /^[\w.-]{1,100}$/

/** A repository name as the hub spells it: owner/name. */
export function isHubRepo(repo: string): boolean {
  return REPO.test(repo)
}

/** A file path inside a repository, without '.' or '..' segments. */
export function isHubFile(file: string): boolean {
  return FILE.test(file)
}

/** `"abc"` or `W/"abc"` → abc. */
function unquote(etag: string | null): string {
  return (etag ?? '').replace(/^W\//, '').replace(/^"|"$/g, '').toLowerCase()
}

export interface HubOptions {
  readonly hub?: string
  readonly revision?: string
  readonly signal?: AbortSignal
  readonly fetch?: typeof fetch
}

/** Where `file` of `repo` is and what it must hash to; DownloadError when the hub cannot say. */
export async function hubFile(repo: string, file: string, options: HubOptions = {}): Promise<RemoteFile> {
  const revision = options.revision ?? 'main'
  if (!REPO.test(repo) || !FILE.test(file) || !REVISION.test(revision)) throw new DownloadError(`Not a hub file: ${repo} / ${file} @ ${revision}.`)
  const url = `${options.hub ?? HUGGING_FACE_HUB}/${repo}/resolve/${encodeURIComponent(revision)}/${file.split('/').map(encodeURIComponent).join('/')}`
  let response: Response
  try {
    response = await (options.fetch ?? fetch)(url, { method: 'HEAD', redirect: 'manual', signal: options.signal })
  } catch (err) {
    options.signal?.throwIfAborted()
    throw new DownloadError(`Could not reach ${new URL(url).host} (offline?): ${err instanceof Error ? err.message : String(err)}.`, { cause: err })
  }
  if (response.status === 401 || response.status === 403) throw new DownloadError(`${repo} needs a sign-in on the hub (a gated or private model).`)
  if (response.status === 404) throw new DownloadError(`${file} is not in ${repo} at ${revision}.`)
  if (response.status >= 400) throw new DownloadError(`The hub answered HTTP ${response.status} for ${repo}/${file}.`)
  const lfsHash = unquote(response.headers.get('x-linked-etag'))
  if (/^[0-9a-f]{64}$/.test(lfsHash)) {
    const bytes = Number(response.headers.get('x-linked-size'))
    if (!Number.isSafeInteger(bytes) || bytes < 0) throw new DownloadError(`The hub gave no size for ${repo}/${file}.`)
    return { url, bytes, digest: { algorithm: 'sha256', hex: lfsHash } }
  }
  const gitHash = unquote(response.headers.get('etag'))
  const bytes = Number(response.headers.get('content-length'))
  if (response.status === 200 && /^[0-9a-f]{40}$/.test(gitHash) && Number.isSafeInteger(bytes) && bytes >= 0) {
    return { url, bytes, digest: { algorithm: 'git-sha1', hex: gitHash } }
  }
  throw new DownloadError(`The hub gave no checksum for ${repo}/${file}, so a download could not be verified.`)
}
