/**
 * The reference page's style sheet (written into the page) and its script, which adds "Try it" to each
 * operation the server has already written out (docs-html.ts). The script reads the operation's
 * parameters and example from /api/openapi.json, sends the request to this server and shows the
 * answer: JSON or text, an image, audio, or a stream as it arrives. Tokens typed in stay in the
 * tab's sessionStorage. No framework: the page must read at once, with or without the script.
 */

export const DOCS_STYLE = `
:root { --fg: #1d2330; --muted: #5b6475; --line: #dde1e8; --bg: #fff; --soft: #f5f7fa; --accent: #3556d8; }
* { box-sizing: border-box; }
body { margin: 0; font: 15px/1.5 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; color: var(--fg); background: var(--bg); }
code, pre, textarea, input { font-family: ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; font-size: 13px; }
a { color: var(--accent); text-decoration: none; } a:hover { text-decoration: underline; }
#toc { position: fixed; top: 0; left: 0; bottom: 0; width: 300px; overflow-y: auto; padding: 12px 14px; border-right: 1px solid var(--line); background: var(--soft); font-size: 13px; }
#toc ul { list-style: none; margin: 0; padding: 0 0 0 6px; } #toc > ul > li { margin: 8px 0 2px; font-weight: 600; } #toc li li { font-weight: 400; white-space: nowrap; overflow: hidden; text-overflow: ellipsis; }
main { margin-left: 300px; padding: 8px 32px 64px; max-width: 1200px; }
@media (max-width: 900px) { #toc { position: static; width: auto; max-height: 40vh; border-right: 0; border-bottom: 1px solid var(--line); } main { margin-left: 0; padding: 8px 14px; } }
h2 { margin: 40px 0 4px; padding-top: 8px; border-top: 2px solid var(--line); }
.op { margin: 18px 0; padding: 10px 14px; border: 1px solid var(--line); border-radius: 8px; content-visibility: auto; contain-intrinsic-size: auto 640px; }
.schema { content-visibility: auto; contain-intrinsic-size: auto 240px; }
.op-head { margin: 0; font-size: 16px; display: flex; flex-wrap: wrap; align-items: center; gap: 8px; }
.summary { margin: 4px 0 8px; }
.m { display: inline-block; min-width: 58px; padding: 1px 6px; border-radius: 4px; color: #fff; font: 600 12px/1.6 ui-monospace, monospace; text-align: center; }
.m.get { background: #2f7d4f; } .m.post { background: #3556d8; } .m.put { background: #a26100; } .m.patch { background: #7a4bc4; } .m.delete { background: #b4232a; }
.who { font: 12px/1.6 system-ui, sans-serif; padding: 0 8px; border-radius: 10px; background: #fdeccf; color: #6b4300; }
.who.public { background: #e3f4e8; color: #1e5b34; } .who.optional { background: #e8edfb; color: #253f99; }
h4 { margin: 12px 0 4px; font-size: 14px; } h5 { margin: 8px 0 2px; font-size: 13px; }
table { border-collapse: collapse; width: 100%; font-size: 13px; } td, th { border-top: 1px solid var(--line); padding: 4px 8px; vertical-align: top; text-align: left; }
th { color: var(--muted); font-weight: 600; } td ul { margin: 0; padding-left: 18px; }
table.fields table.fields { margin-top: 4px; background: var(--soft); }
.req { color: #b4232a; font-size: 11px; } .rules, .eg { color: var(--muted); font-size: 12px; }
tr.s2 td:first-child, tr.s3 td:first-child { color: #2f7d4f; font-weight: 600; } tr.s4 td:first-child, tr.s5 td:first-child { color: #b4232a; font-weight: 600; }
pre { background: var(--soft); padding: 8px 10px; border-radius: 6px; overflow-x: auto; }
.try { margin-left: auto; font: 600 13px system-ui, sans-serif; padding: 3px 12px; border: 1px solid var(--accent); border-radius: 6px; background: #fff; color: var(--accent); cursor: pointer; }
.try-form { margin-top: 10px; padding: 10px; background: var(--soft); border-radius: 6px; }
.try-form label { display: block; margin: 6px 0 2px; font-size: 13px; } .try-form input[type=text], .try-form textarea { width: 100%; padding: 4px 6px; border: 1px solid var(--line); border-radius: 4px; }
.try-form textarea { min-height: 120px; } .try-form button { margin: 8px 8px 0 0; }
.try-out { margin-top: 8px; } .try-out img { max-width: 100%; border: 1px solid var(--line); } .status { font-weight: 600; }
#tokens { margin: 8px 0; padding: 8px 12px; border-radius: 6px; background: #fffbe9; border-bottom: 1px solid var(--line); font-size: 13px; }
#tokens input { width: 22em; margin: 0 12px 0 4px; }
`

/** Adds "Try it" to every operation of the page; without it the page is the same reference. */
export const DOCS_SCRIPT = `'use strict'
;(() => {
  const LABELS = { bearerAuth: 'Session token', gatewayKey: 'Gateway key', metricsToken: 'Metrics token' }
  const stored = (name) => sessionStorage.getItem('plaza-docs:' + name) || ''
  let documentPromise
  const openapi = () => (documentPromise = documentPromise || fetch('/api/openapi.json').then((answer) => answer.json()))
  const el = (tag, attributes = {}, ...children) => {
    const node = document.createElement(tag)
    for (const [key, value] of Object.entries(attributes)) if (value !== undefined) node.setAttribute(key, value)
    node.append(...children)
    return node
  }

  const bar = el('div', { id: 'tokens' }, 'Tokens for "Try it" (kept in this tab only):')
  for (const [name, label] of Object.entries(LABELS)) {
    const input = el('input', { type: 'text', id: 'token-' + name, placeholder: label, autocomplete: 'off', spellcheck: 'false' })
    input.value = stored(name)
    input.addEventListener('change', () => sessionStorage.setItem('plaza-docs:' + name, input.value.trim()))
    bar.append(el('label', { for: 'token-' + name }, ' ' + label), input)
  }
  document.querySelector('main').prepend(bar)

  for (const section of document.querySelectorAll('section.op')) {
    const button = el('button', { type: 'button', class: 'try' }, 'Try it')
    section.querySelector('.op-head').append(button)
    button.addEventListener('click', () => toggle(section).catch((error) => alert(String(error))))
  }

  async function toggle(section) {
    const open = section.querySelector('form.try-form')
    if (open) return void open.remove()
    const doc = await openapi()
    const operation = doc.paths[section.dataset.path][section.dataset.method]
    section.append(formFor(section, operation))
  }

  function formFor(section, operation) {
    const form = el('form', { class: 'try-form' })
    const inputs = []
    for (const parameter of operation.parameters || []) {
      const id = operation.operationId + '-' + parameter.in + '-' + parameter.name
      const input = el('input', { type: 'text', id, name: parameter.name })
      if (parameter.example !== undefined) input.value = typeof parameter.example === 'string' ? parameter.example : JSON.stringify(parameter.example)
      form.append(el('label', { for: id }, parameter.name + ' (' + parameter.in + (parameter.required ? ', required' : '') + ')'), input)
      inputs.push({ parameter, input })
    }
    const content = (operation.requestBody && operation.requestBody.content) || {}
    let body
    let file
    if (content['application/json']) {
      body = el('textarea', { id: operation.operationId + '-body', spellcheck: 'false' })
      const example = content['application/json'].example
      body.value = example === undefined ? '{}' : JSON.stringify(example, null, 2)
      form.append(el('label', { for: body.id }, 'Body (JSON)'), body)
    } else if (content['multipart/form-data']) {
      const field = Object.keys(content['multipart/form-data'].schema.properties)[0]
      file = el('input', { type: 'file', id: operation.operationId + '-file', name: field })
      form.append(el('label', { for: file.id }, 'File (' + field + ')'), file)
    }
    const send = el('button', { type: 'submit' }, 'Send')
    const stop = el('button', { type: 'button', disabled: '' }, 'Stop')
    const out = el('div', { class: 'try-out', 'aria-live': 'polite' })
    form.append(send, stop, out)
    let controller
    stop.addEventListener('click', () => controller && controller.abort())
    form.addEventListener('submit', async (event) => {
      event.preventDefault()
      controller = new AbortController()
      stop.disabled = false
      send.disabled = true
      out.replaceChildren(el('p', {}, 'Sending…'))
      try {
        await run(section, operation, inputs, body, file, out, controller.signal)
      } catch (error) {
        if (error.name !== 'AbortError') out.replaceChildren(el('p', { class: 'status' }, 'Failed: ' + error.message))
      } finally {
        stop.disabled = true
        send.disabled = false
      }
    })
    return form
  }

  async function run(section, operation, inputs, body, file, out, signal) {
    let path = section.dataset.path
    const query = new URLSearchParams()
    for (const { parameter, input } of inputs) {
      if (parameter.in === 'path') path = path.replace('{' + parameter.name + '}', encodeURIComponent(input.value))
      else if (input.value !== '') query.set(parameter.name, input.value)
    }
    const headers = {}
    const schemes = (operation.security || []).flatMap((requirement) => Object.keys(requirement))
    for (const scheme of schemes) {
      const token = stored(scheme) || (document.getElementById('token-' + scheme) || {}).value
      if (token) {
        headers.authorization = 'Bearer ' + token.trim()
        break
      }
    }
    let payload
    if (body) {
      payload = body.value
      headers['content-type'] = 'application/json'
    } else if (file && file.files[0]) {
      payload = new FormData()
      payload.append(file.name, file.files[0])
    }
    const url = path + (query.size ? '?' + query : '')
    const started = performance.now()
    const answer = await fetch(url, { method: section.dataset.method.toUpperCase(), headers, body: payload, signal, redirect: 'manual' })
    const type = answer.headers.get('content-type') || ''
    const status = el('p', { class: 'status' }, section.dataset.method.toUpperCase() + ' ' + url + ' → ' + (answer.status || 'redirect') + ' ' + answer.statusText + ' (' + Math.round(performance.now() - started) + ' ms, ' + (type || 'no body') + ')')
    out.replaceChildren(status)
    if (type.startsWith('image/') || type.startsWith('audio/')) {
      const source = URL.createObjectURL(await answer.blob())
      out.append(type.startsWith('image/') ? el('img', { src: source, alt: 'the answer' }) : el('audio', { src: source, controls: '' }))
      return
    }
    const pre = el('pre', {}, '')
    out.append(pre)
    if (!answer.body) return
    const reader = answer.body.pipeThrough(new TextDecoderStream()).getReader()
    let text = ''
    for (;;) {
      const { value, done } = await reader.read()
      if (done) break
      text += value
      pre.textContent = text
    }
    if (type.includes('json')) {
      try {
        pre.textContent = JSON.stringify(JSON.parse(text), null, 2)
      } catch {}
    }
  }
})()
`
