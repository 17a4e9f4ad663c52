import { createServer, type Server, type ServerResponse } from "node:http";
import { afterAll, beforeAll, beforeEach, describe, expect, it, vi } from "vitest";
import { configureApi } from "../../../src/api/client.ts";
import { setPlatform } from "../../../src/platform/platform.ts";
import { testPlatform } from "../../../src/platform/test.ts";
import {
  $messengerLink,
  cancelMessengerPasscode,
  confirmMessengerPasscode,
  openBotLink,
  unlinkMessengerAccount,
} from "../../../src/stores/messenger-link.ts";
import { $activeToast } from "../../../src/stores/toasts.ts";
import { $profile } from "../../../src/stores/user.ts";

/** The gateway's link calls, scripted per test; every call is recorded with its pincode header. */
let answer: (
  path: string,
  pincode: string | undefined,
) => { status: number; body: unknown } = () => ({ status: 500, body: {} });
const all: Array<{ path: string; pincode: string | undefined }> = [];
/** The link calls (a profile reload after unlinking may come in between). */
const calls = {
  get list() {
    return all.filter((call) => call.path.startsWith("/user/tg"));
  },
};
let server: Server;

beforeAll(async () => {
  server = createServer((req, res: ServerResponse) => {
    req.resume();
    req.on("end", () => {
      const path = (req.url ?? "").replace(/^\/api/, "");
      const pincode =
        typeof req.headers.pincode === "string"
          ? req.headers.pincode
          : undefined;
      all.push({ path, pincode });
      const out = answer(path, pincode);
      res.writeHead(out.status, { "content-type": "application/json" });
      res.end(JSON.stringify(out.body));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const address = server.address();
  configureApi({
    baseURL: `http://127.0.0.1:${address && typeof address === "object" ? address.port : 0}/api`,
    timeoutMs: 2_000,
  });
});
afterAll(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

const profile = (pinCodeActive: boolean) =>
  $profile.set({
    data: { email: "a@example.com", accounts: [], pinCodeActive, tgAuth: true },
    loading: false,
    error: null,
  });
const linked = {
  linked: true,
  telegram: { id: 1, username: "ann", firstName: "Ann" },
  botUsername: "wallet_bot",
  notifications: true,
};
const unlinked = { linked: false, telegram: null, botUsername: "wallet_bot", notifications: true };

describe("linking and unlinking the messaging account (issue 14 item 5)", () => {
  let platform: ReturnType<typeof testPlatform>;
  beforeEach(() => {
    all.length = 0;
    platform = testPlatform();
    setPlatform(platform);
    $messengerLink.set({ state: linked, busy: false, asking: null });
    $activeToast.set(null);
  });

  it("with the passcode off, runs at once and tells the user to sign in again when the gateway wants a recent sign-in", async () => {
    profile(false);
    answer = () => ({
      status: 403,
      body: {
        exceptionCode: "RECENT_SIGN_IN_REQUIRED",
        message: "Sign in again",
      },
    });
    await unlinkMessengerAccount();
    // The unlink runs in the background over a real socket: wait for its end, not for a fixed time (slow under load).
    await vi.waitFor(() => expect([$activeToast.get() !== null, $messengerLink.get().busy]).toEqual([true, false]), { timeout: 5000 });
    expect(calls.list).toEqual([
      { path: "/user/tg/unlink", pincode: undefined },
    ]);
    expect($activeToast.get()?.text).toBe(
      "For your safety, log out and log in again to change the linked Telegram account.",
    );
    expect($messengerLink.get()).toMatchObject({
      state: linked,
      busy: false,
      asking: null,
    });
  });

  it("with the passcode on, asks for it first; a wrong code stays in the prompt, the right one unlinks", async () => {
    profile(true);
    answer = (path, pincode) =>
      pincode === "2580"
        ? { status: 200, body: path === "/user/tg/unlink" ? unlinked : {} }
        : {
            status: 403,
            body: {
              exceptionCode: "B2C_USM0031",
              message: "Incorrect pin code",
            },
          };
    await unlinkMessengerAccount();
    expect(calls.list).toEqual([]);
    expect($messengerLink.get().asking).toBe("unlink");

    await expect(confirmMessengerPasscode("1111")).rejects.toBeTruthy();
    expect($messengerLink.get()).toMatchObject({
      asking: "unlink",
      busy: false,
      state: linked,
    });
    await confirmMessengerPasscode("2580");
    expect(calls.list.map((call) => call.pincode)).toEqual(["1111", "2580"]);
    expect($messengerLink.get()).toMatchObject({
      asking: null,
      busy: false,
      state: unlinked,
    });
  });

  it("links through the bot with the passcode, and the way back from the prompt does nothing", async () => {
    profile(true);
    answer = () => ({
      status: 200,
      body: {
        code: "c".repeat(43),
        url: "https://t.me/wallet_bot?start=ccc",
        expiresAt: new Date().toISOString(),
      },
    });
    await openBotLink();
    expect($messengerLink.get().asking).toBe("link");
    cancelMessengerPasscode();
    expect($messengerLink.get().asking).toBeNull();
    expect(calls.list).toEqual([]);

    await openBotLink();
    await confirmMessengerPasscode("2580");
    expect(calls.list).toEqual([{ path: "/user/tg/code", pincode: "2580" }]);
    expect(platform.left).toEqual(["https://t.me/wallet_bot?start=ccc"]);
  });
});
