// At most `size` holders at once; the others wait in arrival order.
export function createSemaphore(size: number) {
  let held = 0;
  const waiting: (() => void)[] = [];
  return {
    async acquire(): Promise<() => void> {
      if (held < size) held++;
      else await new Promise<void>((resolve) => waiting.push(resolve)); // the releaser hands its place over
      let released = false;
      return () => {
        if (released) return;
        released = true;
        const next = waiting.shift();
        if (next) next();
        else held--;
      };
    },
  };
}
