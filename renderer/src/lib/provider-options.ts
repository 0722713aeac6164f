/** @file Provider options as the settings form writes them: "key=value" pairs separated by commas or new lines. */

/** The options in `text` ("device_type=NPU, cache_dir=/tmp/vai"), or a sentence saying what is wrong. */
export function parseProviderOptions(text: string): { readonly options: Record<string, string> } | { readonly error: string } {
  const options: Record<string, string> = {}
  for (const part of text.split(/[,\n]/)) {
    const item = part.trim()
    if (item === '') continue
    const eq = item.indexOf('=')
    const key = eq < 0 ? '' : item.slice(0, eq).trim()
    if (key === '') return { error: `Write each option as name=value (got "${item}").` }
    if (Object.hasOwn(options, key)) return { error: `The option ${key} is given twice.` }
    options[key] = item.slice(eq + 1).trim()
  }
  return { options }
}

/** "device_type=NPU, cache_dir=/tmp/vai" (empty when there are none). */
export function formatProviderOptions(options: Readonly<Record<string, string>>): string {
  return Object.entries(options)
    .map(([k, v]) => `${k}=${v}`)
    .join(', ')
}
