// A typed hook point (as graphile-worker's `hooks` and pg-boss's EventEmitter): a worker emits
// named events, and the observers (metrics, the activity log line) subscribe once, in the
// composition root, instead of callbacks passed down by hand through each layer. An observer
// that throws is logged through `onError` and never stops the worker or the other observers.

/** Event names and the payload each carries. */
export type EventMap = Record<string, unknown>;

export type Hooks<E extends EventMap> = {
  /** Subscribes `listener` to `name`; returns the unsubscribe. */
  on<K extends keyof E>(name: K, listener: (event: E[K]) => void): () => void;
  /** Calls the listeners of `name`, in subscription order. */
  emit<K extends keyof E>(name: K, event: E[K]): void;
};

export function createHooks<E extends EventMap>(onError: (err: unknown, name: keyof E) => void = () => {}): Hooks<E> {
  const listeners = new Map<keyof E, Set<(event: never) => void>>();
  return {
    on(name, listener) {
      const set = listeners.get(name) ?? new Set();
      listeners.set(name, set);
      set.add(listener as (event: never) => void);
      return () => void set.delete(listener as (event: never) => void);
    },
    emit(name, event) {
      const set = listeners.get(name);
      if (!set) return;
      for (const listener of set) {
        try {
          (listener as (event: E[typeof name]) => void)(event);
        } catch (err) {
          onError(err, name);
        }
      }
    },
  };
}
