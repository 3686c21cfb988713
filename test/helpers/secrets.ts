import { Sealer, parseKey } from '../../src/lib/sealed.js';

/** The SECRETS_KEY of the test suite's apps, workers and server processes (base64 of 32 bytes). */
export const TEST_SECRETS_KEY = 'dGVzdC1zZWNyZXRzLWtleS0wMTIzNDU2Nzg5YWJjZGU=';

/** Seals and opens what the test apps store. */
export const testSealer = new Sealer(parseKey(TEST_SECRETS_KEY)!);
