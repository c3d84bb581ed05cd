/**
 * MDCT of 2M windowed samples into M coefficients, computed as a DCT-IV of the folded input, the DCT-IV
 * through an M/2-point complex FFT. Scaled as AAC's encoder definition: X[k] = 2 * sum z[n] cos(...).
 */

export function mdct(input: Float64Array): Float64Array {
  const n = input.length;
  const m = n / 2;
  const half = m / 2;
  // Fold (a, b, c, d) into (-c_r - d, a - b_r).
  const folded = new Float64Array(m);
  for (let i = 0; i < half; i++) {
    folded[i] = -input[3 * half - 1 - i] - input[3 * half + i];
    folded[half + i] = input[i] - input[m - 1 - i];
  }
  const out = dct4(folded);
  for (let k = 0; k < m; k++) out[k] *= 2;
  return out;
}

/** X[k] = sum u[n] cos(pi/M (n + 1/2)(k + 1/2)), for M a power of two. */
export function dct4(u: Float64Array): Float64Array {
  const m = u.length;
  const half = m / 2;
  const re = new Float64Array(half);
  const im = new Float64Array(half);
  for (let i = 0; i < half; i++) {
    const a = u[2 * i];
    const b = u[m - 1 - 2 * i];
    const angle = (-Math.PI * (4 * i + 1)) / (4 * m);
    const c = Math.cos(angle);
    const s = Math.sin(angle);
    re[i] = a * c - b * s;
    im[i] = a * s + b * c;
  }
  fft(re, im);
  const out = new Float64Array(m);
  for (let k = 0; k < half; k++) {
    const angle = (-Math.PI * k) / m;
    const c = Math.cos(angle);
    const s = Math.sin(angle);
    const yr = re[k] * c - im[k] * s;
    const yi = re[k] * s + im[k] * c;
    out[2 * k] = yr;
    out[m - 1 - 2 * k] = -yi;
  }
  return out;
}

/** In-place iterative radix-2 FFT (forward, e^{-i...}). */
export function fft(re: Float64Array, im: Float64Array): void {
  const n = re.length;
  for (let i = 1, j = 0; i < n; i++) {
    let bit = n >> 1;
    for (; j & bit; bit >>= 1) j ^= bit;
    j ^= bit;
    if (i < j) {
      [re[i], re[j]] = [re[j], re[i]];
      [im[i], im[j]] = [im[j], im[i]];
    }
  }
  for (let size = 2; size <= n; size <<= 1) {
    const step = (-2 * Math.PI) / size;
    for (let start = 0; start < n; start += size) {
      for (let k = 0; k < size / 2; k++) {
        const c = Math.cos(step * k);
        const s = Math.sin(step * k);
        const i = start + k;
        const j = i + size / 2;
        const tr = re[j] * c - im[j] * s;
        const ti = re[j] * s + im[j] * c;
        re[j] = re[i] - tr;
        im[j] = im[i] - ti;
        re[i] += tr;
        im[i] += ti;
      }
    }
  }
}
