/**
 * @file Device worker entry: one thread per device, owning that device's ORT sessions and KV layers. It
 * blocks in Atomics.wait for each command from its coordinator (handoff.ts) — the engine's setup and tasks,
 * or the profiler's timings; payloads are read from its port synchronously when a command says so — and
 * exits on the exit command.
 */
import { receiveMessageOnPort, workerData } from 'node:worker_threads'
import { DeviceExecutor } from './device-executor'
import { OP, parseDeviceWorkerInit } from './device-protocol'
import { ProtocolError } from '../errors'
import { reply, serveCommands } from './handoff'
import { ValueArena } from './value-arena'

const init = parseDeviceWorkerInit(workerData)
const executor = new DeviceExecutor(init, ValueArena.attach(init.arena))

await serveCommands(init.control, init.port, async (op, args) => {
  switch (op) {
    case OP.ping:
      return true
    case OP.message: {
      const m = receiveMessageOnPort(init.port)
      if (m === undefined) throw new ProtocolError('message command without a message on the port')
      const answer = await executor.apply(m.message)
      if (answer instanceof Uint8Array && answer.buffer instanceof ArrayBuffer) reply(init.port, answer, [answer.buffer])
      else if (answer !== null) reply(init.port, answer)
      return true
    }
    case OP.run: {
      const parity = args[1]
      if (parity !== 0 && parity !== 1) throw new ProtocolError(`parity must be 0 or 1, got ${parity}`)
      await executor.run(args[0], parity, args[2], args[3])
      return true
    }
    case OP.echo:
      executor.echo(args[0], args[1])
      return true
    case OP.exit:
      await executor.dispose()
      return false
    default:
      throw new ProtocolError(`unknown device command ${op}`)
  }
})
init.port.close()
