import { afterAll, beforeAll } from 'vitest';
import { appOnOwnDatabase } from './fresh-database.js';
import { TWILIO_SETTINGS, startTwilioFake, type TwilioFake } from './twilio-fake.js';
import { testProviders } from './worker.js';

/** The gateway's public address in the Twilio tests: Twilio signs its requests to URLs under it, whatever address a proxy forwards to. */
export const TWILIO_PUBLIC_URL = 'https://connect.example.test';

export interface TwilioApp {
  /** The local fake of Twilio's REST API, with TWILIO_SETTINGS' account. */
  fake: TwilioFake;
  /** An app on a database of its own (its worker claims every due delivery and inbound event), sending to the fake. */
  app: Awaited<ReturnType<typeof appOnOwnDatabase>>;
}

/** For a Twilio test file: the fake and the app, made before the file's tests and closed after them; set once the tests run. */
export function twilioApp(): TwilioApp {
  const made = {} as TwilioApp;
  beforeAll(async () => {
    made.fake = await startTwilioFake({ accountSid: TWILIO_SETTINGS.accountSid, authToken: TWILIO_SETTINGS.authToken });
    made.app = await appOnOwnDatabase({
      env: { PUBLIC_URL: TWILIO_PUBLIC_URL },
      providers: testProviders({ settings: { TWILIO_API_URL: made.fake.url }, publicUrl: TWILIO_PUBLIC_URL }),
    });
  });
  afterAll(async () => {
    await made.app?.drop();
    await made.fake?.close();
  });
  return made;
}
