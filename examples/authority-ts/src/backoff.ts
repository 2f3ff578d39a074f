// Full-jitter exponential backoff, as the Go SDK's: after the n-th failure
// in a row wait a uniform time in [0, min(max, base*2^(n-1))], so backends
// dropped together do not return together.
export const backoffBaseMs = 100;
export const backoffMaxMs = 30_000;

export function backoffMs(failures: number, random: () => number = Math.random): number {
  if (failures < 1) return 0;
  const ceiling = Math.min(backoffMaxMs, backoffBaseMs * 2 ** Math.min(failures - 1, 30));
  return Math.floor(random() * (ceiling + 1));
}
