/**
 * How a cluster splits the webhook dispatch: every webhook belongs to one of `count` shares
 * (by a hash of its id), and each share's deliveries are attempted by one dispatcher entity,
 * wherever the cluster placed it. More runners take more shares: more delivery capacity.
 */
export interface DispatchShare {
  readonly index: number
  readonly count: number
}

/** The share a webhook's deliveries belong to (FNV-1a of its id: stable across runners and restarts). */
export const shareOf = (webhookId: string, count: number): number => {
  let hash = 0x811c9dc5
  for (let i = 0; i < webhookId.length; i++) hash = Math.imul(hash ^ webhookId.charCodeAt(i), 0x01000193)
  return (hash >>> 0) % count
}
