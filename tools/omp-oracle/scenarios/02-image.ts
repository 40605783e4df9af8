// 02-image: a prompt with an image. omp externalizes the base64 data on write
// (session-persistence.ts prepareEntryForPersistence -> externalizeImageData): the entry holds
// "blob:sha256:<hex>" and the bytes go to ~/.omp/agent/blobs/<hex> (+ a <hex>.png hard link).
// Two turns, a user title.
import { finish, makePng, setup, turn } from "../lib";

// a 24x24 noisy PNG: omp only externalizes image data of >= 1024 base64 chars
// (session-persistence.ts BLOB_EXTERNALIZE_THRESHOLD)
const png = makePng(24, 24, 7);
const s = await setup({
	mock: {
		responses: [
			{ content: ["I see a square of coloured noise."], usage: { input: 300, output: 8 } },
			{ content: ["It is 24 by 24 pixels."], usage: { input: 320, output: 8 } },
		],
	},
});
await turn(s, "What is in this image?", { images: [{ type: "image", data: png, mimeType: "image/png" }] });
await s.manager.setSessionName("Image question", "user");
await turn(s, "How big is it?");
await finish(s, "02-image");
