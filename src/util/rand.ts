// apimachinery's util/rand: random names and safe encodings from one vowel-free alphabet, so that
// generated names and hashes never spell words.

/** The 27 characters apimachinery's rand package draws from. */
export const RAND_ALPHABET = 'bcdfghjklmnpqrstvwxz2456789';

/** rand.String(n): n characters of the alphabet, each chosen by `random` (uniform in [0, 1)). */
export function randomString(n: number, random: () => number = Math.random): string {
  let s = '';
  for (let i = 0; i < n; i++) s += RAND_ALPHABET[Math.floor(random() * RAND_ALPHABET.length)];
  return s;
}
