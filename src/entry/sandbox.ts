/**
 * `switchboard/engines/sandbox`: the engine without WhatsApp. An in-process network of fake
 * phones that pair, chat and fail on request (`SandboxNetwork`'s faults), for tests and demos.
 */
export { sandboxEngineLayer } from "../app/App.js"
export { SandboxCallSimulator, SandboxEngineLive } from "../runtime/engines/sandbox/SandboxEngine.js"
export {
  SandboxNetwork,
  sandboxPhoneOf,
  type SandboxFaults,
  type SandboxLine,
  type SandboxNetworkOptions
} from "../runtime/engines/sandbox/SandboxNetwork.js"
