import { describe, expect, it } from "@effect/vitest"
import { Context, Effect } from "effect"
import { Groups } from "../src/services/Groups.js"
import { Labels } from "../src/services/Labels.js"
import { startCore } from "./support/core.js"

/** What subscribers of `Events` (webhooks, SSE, embedders) hear about groups and labels. */
describe("directory events", () => {
  it.live("group.join, group.update, group.participants, group.leave and label.update carry what changed", () =>
    Effect.gen(function*() {
      const core = yield* startCore()
      const groups = Context.get(core.context, Groups)
      const labels = Context.get(core.context, Labels)
      const [alpha, beta] = yield* Effect.forEach(["ev-alpha", "ev-beta"], (name) => core.sessions.create({ name, autoStart: true }))
      yield* core.awaitStatus(alpha!.id, "ready")
      yield* core.awaitStatus(beta!.id, "ready")
      const betaPhone = (yield* core.sessions.me(beta!.id)).phone

      const group = yield* groups.create(alpha!.id, "Events", [`${betaPhone}@c.us`])
      yield* groups.setSubject(alpha!.id, group.id, "Events!")
      yield* groups.changeParticipants(alpha!.id, group.id, "promote", [`${betaPhone}@c.us`])
      yield* groups.leave(beta!.id, group.id)

      const heard = (sessionId: string) =>
        Effect.map(core.events(sessionId), (events) => events.filter((e) => e.event.startsWith("group.")).map((e) => [e.event, e.data]))
      const betaHeard = yield* Effect.repeat(heard(beta!.id), { until: (events) => events.some(([kind]) => kind === "group.leave") })
      expect(betaHeard.map(([kind]) => kind)).toEqual(["group.join", "group.update", "group.participants", "group.leave"])
      expect(betaHeard[0]![1]).toMatchObject({ groupId: group.id, group: { subject: "Events" } })
      expect(betaHeard[1]![1]).toMatchObject({ groupId: group.id, update: { subject: "Events!" } })
      expect(betaHeard[2]![1]).toMatchObject({ action: "promote", participants: [`${betaPhone}@c.us`] })
      const alphaHeard = yield* Effect.repeat(heard(alpha!.id), { until: (events) => events.length >= 4 })
      expect(alphaHeard[3]).toEqual(["group.participants", expect.objectContaining({ action: "remove", participants: [`${betaPhone}@c.us`] })])

      yield* core.network.setBusiness(alpha!.id, true)
      const label = yield* labels.create(alpha!.id, "VIP", 2)
      const labelEvents = yield* Effect.repeat(
        Effect.map(core.events(alpha!.id), (events) => events.filter((e) => e.event === "label.update")),
        { until: (events) => events.length >= 1 }
      )
      expect(labelEvents[0]!.data).toEqual({ kind: "label", label, deleted: false })
    }).pipe(Effect.scoped))
})
