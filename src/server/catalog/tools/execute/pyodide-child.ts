/**
 * The program of a Python sandbox process, run with `node --input-type=module --eval` (so that it
 * needs no file of its own under Node's permission model, and reads the same from src/ and dist/).
 *
 * Its stdin starts with a line `{"snapshot":N}` and N bytes: a memory snapshot of a freshly loaded
 * interpreter (made by this same program run with the argument `snapshot`, which writes the line
 * and the bytes on stdout and exits), or none when N is 0. It loads Pyodide (from the snapshot in
 * a fraction of the time), says `{"ready":true}` on stdout, reads one job line on stdin, runs it and
 * streams `{"stream":1|2,"text":...}` lines, then `{"exit":N}`, and exits: one program per process,
 * so every run starts from a fresh interpreter and nothing a program did (monkey-patched builtins,
 * files in the virtual file system, a bridge it found to JavaScript) outlives it. It runs at a
 * lower CPU priority than the server (nice 10), which answers the social API meanwhile.
 *
 * The Python-level blocks below are the first layer only (CPython cannot be sandboxed from inside);
 * the boundary is the process: clean environment, Node's permission model (read-only access to
 * Pyodide's own files, no child processes, no workers), network and PID namespaces where the host
 * allows them, the networking and signalling functions removed here in any case, and the parent's
 * time and memory kill.
 */
export const PYODIDE_CHILD_SOURCE = String.raw`
import { constants, writeSync } from 'node:fs'
import dgram from 'node:dgram'
import dns from 'node:dns'
import net from 'node:net'
import { setPriority } from 'node:os'

// The thread that runs Python (Linux keeps a nice value per thread); refused, it keeps the server's.
try { setPriority(10) } catch {}

const refuse = () => { throw new Error('not available in the sandbox') }
// Pyodide's file-system layer asks for the fs constants through process.binding, which the permission model refuses.
process.binding = (name) => {
  if (name === 'constants') return { fs: constants }
  throw new Error('process.binding is not available in the sandbox')
}
for (const name of ['fetch', 'WebSocket', 'EventSource', 'XMLHttpRequest', 'Request']) delete globalThis[name]
// No signals to other processes (Plaza runs as the same user); the parent does the killing.
process.kill = refuse
process._kill = refuse
net.Socket.prototype.connect = refuse
net.Server.prototype.listen = refuse
dgram.Socket.prototype.bind = refuse
dgram.Socket.prototype.send = refuse
dgram.Socket.prototype.connect = refuse
for (const name of Object.keys(dns)) if (typeof dns[name] === 'function') dns[name] = refuse
for (const name of Object.keys(dns.promises)) if (typeof dns.promises[name] === 'function') dns.promises[name] = refuse

// Written synchronously: Python runs on this thread, so a write queued for the event loop would wait
// for the program to end, and be lost when an endless one is killed. A full pipe is waited out.
const pause = new Int32Array(new SharedArrayBuffer(4))
const emit = (message) => {
  let bytes = Buffer.from(JSON.stringify(message) + '\n')
  while (bytes.length > 0) {
    try {
      bytes = bytes.subarray(writeSync(1, bytes))
    } catch (error) {
      if (error.code !== 'EAGAIN') throw error
      Atomics.wait(pause, 0, 0, 1)
    }
  }
}
const { loadPyodide } = await import(process.argv[1])
const options = { env: { HOME: '/home/pyodide', LANG: 'C.UTF-8' }, jsglobals: Object.create(null) }

if (process.argv[2] === 'snapshot') {
  const maker = await loadPyodide({ ...options, _makeSnapshot: true })
  maker.runPython('import sys, os, traceback')
  const bytes = maker.makeMemorySnapshot()
  emit({ snapshot: bytes.length })
  let rest = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength)
  while (rest.length > 0) {
    try {
      rest = rest.subarray(writeSync(1, rest))
    } catch (error) {
      if (error.code !== 'EAGAIN') throw error
      Atomics.wait(pause, 0, 0, 1)
    }
  }
  process.exit(0)
}

// stdin: the snapshot's header line and bytes, then (after ready) the job's line. Chunks are kept
// apart until the snapshot is whole (joining each new chunk onto 32 MiB would copy gigabytes).
let input = Buffer.alloc(0)
let pending = []
let pendingBytes = 0
let snapshotBytes = -1
let takeJob = null
const snapshot = new Promise((resolve) => {
  process.stdin.on('data', (chunk) => {
    if (takeJob) {
      input = Buffer.concat([input, chunk])
      const end = input.indexOf(10)
      if (end >= 0) takeJob(end)
      return
    }
    pending.push(chunk)
    pendingBytes += chunk.length
    if (snapshotBytes < 0) {
      input = Buffer.concat(pending)
      pending = [input]
      const end = input.indexOf(10)
      if (end < 0) return
      snapshotBytes = JSON.parse(input.subarray(0, end).toString()).snapshot
      pending = [input.subarray(end + 1)]
      pendingBytes = pending[0].length
    }
    if (pendingBytes < snapshotBytes) return
    const all = Buffer.concat(pending)
    pending = []
    input = all.subarray(snapshotBytes)
    takeJob = () => {}
    resolve(snapshotBytes > 0 ? all.subarray(0, snapshotBytes) : null)
  })
})
const fromSnapshot = await snapshot
const pyodide = await loadPyodide(fromSnapshot ? { ...options, _loadSnapshot: fromSnapshot } : options)
pyodide.unregisterJsModule('js')
pyodide.unregisterJsModule('pyodide_js')
pyodide.runPython(${'`'}
import sys, os, traceback

def _plaza_run(code):
    try:
        exec(compile(code, 'main.py', 'exec'), {'__name__': '__main__', '__builtins__': __builtins__})
        return 0
    except SystemExit as stop:
        if stop.code is None:
            return 0
        if isinstance(stop.code, int):
            return stop.code & 0xFF
        print(stop.code, file=sys.stderr)
        return 1
    except BaseException as error:
        traceback.print_exception(type(error), error, error.__traceback__.tb_next)
        return 1
    finally:
        try:
            sys.stdout.flush()
            sys.stderr.flush()
        except BaseException:
            pass

# The bridges to JavaScript (and through it to fetch and the host): gone from the import system.
for _name in list(sys.modules):
    if _name in ('js', 'pyodide_js', 'micropip') or _name.startswith(('pyodide', '_pyodide')):
        sys.modules[_name] = None
for _name in ('js', 'pyodide_js', 'pyodide', '_pyodide', '_pyodide_core', 'micropip', 'pyodide_http'):
    sys.modules[_name] = None
os.environ.clear()
os.environ.update({'HOME': '/home/pyodide', 'LANG': 'C.UTF-8', 'PATH': '/usr/bin'})
os.chdir('/home/pyodide')
del _name
${'`'})
const run = pyodide.globals.get('_plaza_run')
pyodide.globals.delete('_plaza_run')

takeJob = (end) => {
  takeJob = () => {}
  process.stdin.pause()
  start(JSON.parse(input.subarray(0, end).toString('utf8')))
}
const end = input.indexOf(10)
if (end >= 0) takeJob(end)
emit({ ready: true })

function start({ code, stdin, outputBytes }) {
  const sizes = [0, 0, 0]
  const finish = (exit) => {
    emit({ exit })
    process.exit(0)
  }
  const writer = (stream) => {
    const decoder = new TextDecoder()
    return {
      write(buffer) {
        const room = Math.max(0, outputBytes + 1 - sizes[stream])
        sizes[stream] += buffer.length
        emit({ stream, text: decoder.decode(buffer.subarray(0, room), { stream: true }) })
        // Past the cap the program is over.
        if (sizes[stream] > outputBytes) finish(1)
        return buffer.length
      },
    }
  }
  pyodide.setStdout(writer(1))
  pyodide.setStderr(writer(2))
  let given = false
  pyodide.setStdin({ stdin: () => (given ? null : ((given = true), stdin)), isatty: false })
  finish(run(code))
}
`
