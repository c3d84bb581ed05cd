import { expect } from 'chai';
import type { TestGateway } from '../support/gateway';
import { invitedMember, signUp, type Session } from '../support/people';
import { newChat, playgroundGateway, settledChat } from '../support/playground';
import { creditsToMicro } from '../../core/money';

describe('Playground API: speech, video, transcription and music in a chat', function () {
  this.timeout(120_000);
  let gateway: TestGateway;
  let stop: () => Promise<void>;
  let owner: Session;
  let third: Session & { userId: string };
  let viewer: Session & { userId: string };

  before(async function () {
    this.timeout(180_000);
    const started = await playgroundGateway();
    ({ gateway, stop } = started);
    const { smtp } = started;
    owner = await signUp(gateway.url, smtp, 'sofia');
    third = await invitedMember(gateway.url, smtp, owner, 'theo', 'developer');
    viewer = await invitedMember(gateway.url, smtp, owner, 'vera', 'viewer');
  });
  after(async () => {
    await stop?.();
  });

  const settledCredits = async (requestId: string) => {
    const row = await gateway.runtime.db('credit_ledger').where({ request_id: requestId, kind: 'settle' }).sum({ total: 'amount_micro' }).first();
    return -Number(row?.total);
  };

  it('speaks through the audio.speech workflow: an audio file on the message, its receipt from the ledger, no key', async () => {
    const chat = await newChat(owner, { model: 'sim-tts' });
    const sent = await owner.json('POST', `/api/playground/chats/${chat.id}/speech`, { model: 'sim-tts', voice: 'nova', input: 'Hello from the Playground', response_format: 'wav' });
    expect(sent.status).to.equal(202);
    expect(sent.body.assistant).to.include({ kind: 'audio', status: 'running' });

    const settled = await settledChat(owner, chat.id);
    const reply = settled.messages[1];
    expect(reply).to.include({ kind: 'audio', status: 'completed', content: 'Hello from the Playground' });
    expect(reply.files).to.have.length(1);
    expect(creditsToMicro(reply.receipt.credits)).to.equal(await settledCredits(reply.request_id)).and.to.be.greaterThan(0);
    expect(reply.receipt).to.include({ endpoint: 'audio.speech', modelUsed: 'sim-tts', status: 'succeeded' });
    expect(await gateway.runtime.db('usage_records').where({ request_id: reply.request_id }).first()).to.include({ api_key_id: null });

    const audio = await owner.fetch(`/api/playground/files/${reply.files[0]}`);
    expect(audio.status).to.equal(200);
    expect(audio.headers.get('content-type')).to.match(/^audio\//);
    expect((await audio.arrayBuffer()).byteLength).to.be.greaterThan(44);
    // A private chat's audio is nobody else's.
    expect((await third.fetch(`/api/playground/files/${reply.files[0]}`)).status).to.equal(404);
  });

  it('makes a generation again as a branch beside it: the same prompt, both answers kept with their own receipts', async () => {
    const chat = await newChat(owner, { model: 'sim-tts' });
    const body = { model: 'sim-tts', voice: 'nova', input: 'Say it twice', response_format: 'wav' };
    await owner.json('POST', `/api/playground/chats/${chat.id}/speech`, body);
    const first = (await settledChat(owner, chat.id)).messages[1];
    const again = await owner.json('POST', `/api/playground/chats/${chat.id}/speech`, { ...first.generation.body, regenerate: first.id });
    expect(again.status).to.equal(202);
    expect(again.body.assistant.parent_id).to.equal(first.parent_id);

    const shown = await settledChat(owner, chat.id);
    expect(shown.messages.map((m: any) => m.role)).to.deep.equal(['user', 'assistant']);
    const second = shown.messages[1];
    expect(second.siblings).to.deep.equal([first.id, second.id]);
    expect(second.generation).to.deep.equal({ endpoint: 'speech', body });
    expect(second.request_id).to.not.equal(first.request_id);
    for (const reply of [first, second]) expect(creditsToMicro(reply.receipt.credits)).to.equal(await settledCredits(reply.request_id));
    // The first stays readable through its branch.
    const earlier = (await owner.json('GET', `/api/playground/chats/${chat.id}?branch=${first.id}`)).body.messages[1];
    expect(earlier).to.include({ id: first.id, status: 'completed', request_id: first.request_id });

    // Only a generation of this chat can be made again; a prompt or an unknown id is a 404 and nothing runs.
    for (const regenerate of [first.parent_id, 'msg_nope']) {
      const refused = await owner.json('POST', `/api/playground/chats/${chat.id}/speech`, { ...body, regenerate });
      expect(refused.status).to.equal(404);
      expect(refused.body.error).to.include({ code: 'message_not_found', param: 'regenerate' });
    }
    expect((await owner.json('GET', `/api/playground/chats/${chat.id}?branch=${second.id}`)).body.messages[1].siblings).to.have.length(2);
  });

  it('refuses a voice the model does not have, and a Viewer, before anything is held', async () => {
    const chat = await newChat(owner, { model: 'sim-tts' });
    const bad = await owner.json('POST', `/api/playground/chats/${chat.id}/speech`, { model: 'sim-tts', voice: 'darth', input: 'x' });
    expect(bad.status).to.equal(400);
    expect(bad.body.error.param).to.equal('voice');
    await owner.json('PUT', `/api/playground/chats/${chat.id}/sharing`, { visibility: 'workspace', workspace_access: 'continue' });
    const byViewer = await viewer.json('POST', `/api/playground/chats/${chat.id}/speech`, { model: 'sim-tts', voice: 'nova', input: 'x' });
    expect(byViewer.status).to.equal(403);
    expect((await owner.json('GET', `/api/playground/chats/${chat.id}`)).body.messages).to.have.length(0);
  });

  it('creates a durable video job like /v1/videos/generations, shows its progress, then plays it to chat readers only', async () => {
    const chat = await newChat(owner, { model: 'sim-video' });
    const sent = await owner.json('POST', `/api/playground/chats/${chat.id}/videos`, { model: 'sim-video', prompt: 'A lighthouse at dusk', duration: 2, resolution: '360p' });
    expect(sent.status).to.equal(202);
    expect(sent.body.assistant).to.include({ kind: 'video', status: 'running' });
    const jobId = sent.body.job.id;
    expect(sent.body.assistant.request_id).to.equal(jobId);
    const row = await gateway.runtime.db('video_jobs').where({ id: jobId }).first();
    expect(row).to.include({ api_key_id: null, model: 'sim-video' });

    const progress: number[] = [];
    const deadline = Date.now() + 60_000;
    let reply: any;
    for (;;) {
      const res = await owner.json('GET', `/api/playground/chats/${chat.id}`);
      reply = res.body.messages[1];
      progress.push(reply.job.progress);
      if (reply.status !== 'running' && reply.receipt) break;
      if (Date.now() > deadline) throw new Error(`video still running: ${JSON.stringify(reply)}`);
      await new Promise((r) => setTimeout(r, 250));
    }
    expect(reply).to.include({ status: 'completed' });
    expect(reply.job).to.include({ status: 'succeeded', progress: 100 });
    expect(reply.receipt).to.include({ endpoint: 'videos.generations', modelUsed: 'sim-video', status: 'succeeded' });
    expect(creditsToMicro(reply.receipt.credits)).to.equal(await settledCredits(jobId)).and.to.be.greaterThan(0);
    expect((await owner.json('GET', `/api/playground/chats/${chat.id}`)).body.total_credits).to.equal(reply.receipt.credits);

    const video = await owner.fetch(`/api/playground/messages/${reply.id}/video`);
    expect(video.status).to.equal(200);
    expect(video.headers.get('content-type')).to.equal('video/mp4');
    expect((await video.arrayBuffer()).byteLength).to.be.greaterThan(100);
    expect((await third.fetch(`/api/playground/messages/${reply.id}/video`)).status).to.equal(404);
  });

  it('finishes a video message when its job ends, with nobody reading the chat: the video a file of the chat, its receipt', async () => {
    const chat = await newChat(owner, { model: 'sim-video' });
    const storageBefore = (await owner.json('GET', '/api/playground/storage')).body;
    const sent = await owner.json('POST', `/api/playground/chats/${chat.id}/videos`, { model: 'sim-video', prompt: 'A harbour at night', duration: 2, resolution: '360p' });
    expect(sent.status).to.equal(202);
    const jobId = sent.body.job.id;
    const messageId = sent.body.assistant.id;
    // The chat is never read until the job's workflow has ended: the workflow itself finished the message.
    const result = await gateway.runtime.temporal.client.workflow.getHandle(jobId).result();
    expect(result).to.include({ status: 'succeeded' });
    const row = await gateway.runtime.db('playground_messages').where({ id: messageId }).first();
    expect(row).to.include({ status: 'completed', content: '1 video', error: null });
    expect(row.files).to.have.length(1);
    const file = await gateway.runtime.db('playground_files').where({ id: row.files[0] }).first();
    expect(file).to.include({ chat_id: chat.id, content_type: 'video/mp4', filename: 'video-1.mp4' });
    const job = await gateway.runtime.db('video_jobs').where({ id: jobId }).first();
    const stored = await gateway.runtime.storage.getBuffer(file.storage_key);
    expect(stored.equals(await gateway.runtime.storage.getBuffer(job.result.videos[0].storageKey))).to.equal(true);
    expect(Number(file.bytes)).to.equal(stored.length);
    // The video counts in the workspace's storage once: as the chat's file, not also as the job's video.
    const storageAfter = (await owner.json('GET', '/api/playground/storage')).body;
    expect(storageAfter.playground_bytes - storageBefore.playground_bytes).to.equal(stored.length);

    const read = await owner.json('GET', `/api/playground/chats/${chat.id}`);
    const reply = read.body.messages[1];
    expect(reply).to.include({ status: 'completed' });
    expect(reply.files).to.deep.equal([file.id]);
    expect(reply.receipt).to.include({ endpoint: 'videos.generations', modelUsed: 'sim-video', status: 'succeeded' });
    expect(creditsToMicro(reply.receipt.credits)).to.equal(await settledCredits(jobId)).and.to.be.greaterThan(0);
    expect(reply.generation).to.deep.equal({ endpoint: 'videos', body: { model: 'sim-video', prompt: 'A harbour at night', duration: 2, resolution: '360p' } });
    const video = await owner.fetch(`/api/playground/messages/${reply.id}/video`);
    expect(Buffer.from(await video.arrayBuffer()).equals(stored)).to.equal(true);
    expect((await owner.fetch(`/api/playground/files/${file.id}`)).status).to.equal(200);
    expect((await third.fetch(`/api/playground/files/${file.id}`)).status).to.equal(404);
  });

  it('fails a video message when its job fails, with nobody reading the chat: the job\'s error, no file, nothing charged', async () => {
    const chat = await newChat(owner, { model: 'sim-video-fail' });
    const sent = await owner.json('POST', `/api/playground/chats/${chat.id}/videos`, { model: 'sim-video-fail', prompt: 'doomed', duration: 4 });
    expect(sent.status).to.equal(202);
    expect(await gateway.runtime.temporal.client.workflow.getHandle(sent.body.job.id).result()).to.include({ status: 'failed' });
    const row = await gateway.runtime.db('playground_messages').where({ id: sent.body.assistant.id }).first();
    expect(row).to.include({ status: 'failed' });
    expect(row.error).to.be.a('string').and.not.empty;
    expect(row.files).to.deep.equal([]);
    expect(await settledCredits(sent.body.job.id)).to.equal(0);
    const reply = (await owner.json('GET', `/api/playground/chats/${chat.id}`)).body.messages[1];
    expect(reply.receipt).to.include({ status: 'failed', credits: 0 });
    expect((await owner.fetch(`/api/playground/messages/${reply.id}/video`)).status).to.equal(404);
  });

  it('refuses a video duration the model does not offer, with nothing recorded', async () => {
    const chat = await newChat(owner, { model: 'sim-video' });
    const bad = await owner.json('POST', `/api/playground/chats/${chat.id}/videos`, { model: 'sim-video', prompt: 'x', duration: 3 });
    expect(bad.status).to.equal(400);
    expect(bad.body.error.param).to.equal('duration');
    expect((await owner.json('GET', `/api/playground/chats/${chat.id}`)).body.messages).to.have.length(0);
  });
  it('transcribes an uploaded audio file of the chat, and generates music as audio files, each with its receipt', async () => {
    const wav = await spokenAudio('durable runs keep going', 'wav');
    const chat = await newChat(owner, { model: 'sim-transcribe' });
    const file = await owner.json('POST', `/api/playground/chats/${chat.id}/files`, { filename: 'note.wav', content_type: 'audio/wav', data: wav.toString('base64') });
    expect(file.status).to.equal(201);
    const text = await owner.json('POST', `/api/playground/chats/${chat.id}/files`, { filename: 'a.txt', content_type: 'text/plain', data: Buffer.from('not audio').toString('base64') });
    const refused = await owner.json('POST', `/api/playground/chats/${chat.id}/transcriptions`, { model: 'sim-transcribe', file_id: text.body.id });
    expect(refused.status).to.equal(400);
    expect(refused.body.error.code).to.equal('invalid_audio_format');

    const sent = await owner.json('POST', `/api/playground/chats/${chat.id}/transcriptions`, { model: 'sim-transcribe', file_id: file.body.id });
    expect(sent.status).to.equal(202);
    const music = await owner.json('POST', `/api/playground/chats/${chat.id}/music`, { model: 'sim-music', prompt: 'a calm piano loop', duration: 5 });
    expect(music.status).to.equal(202);

    const settled = await settledChat(owner, chat.id);
    const [upload, transcript, prompt, track] = settled.messages;
    expect(upload.files).to.deep.equal([file.body.id]);
    expect(transcript).to.include({ status: 'completed' });
    expect(transcript.content.toLowerCase()).to.include('durable runs keep going');
    expect(transcript.receipt).to.include({ endpoint: 'audio.transcriptions', modelUsed: 'sim-transcribe' });
    expect(prompt.content).to.equal('a calm piano loop');
    expect(track).to.include({ kind: 'audio', status: 'completed' });
    expect(creditsToMicro(track.receipt.credits)).to.equal(await settledCredits(track.request_id)).and.to.be.greaterThan(0);
    const audio = await owner.fetch(`/api/playground/files/${track.files[0]}`);
    expect(audio.headers.get('content-type')).to.equal('audio/mpeg');
    // The uploaded file stays with the chat after the run.
    expect((await owner.fetch(`/api/playground/files/${file.body.id}`)).status).to.equal(200);
  });

  it('transcribes an Ogg Opus recording uploaded as the page uploads one (recording.ogg, audio/ogg)', async () => {
    const ogg = await spokenAudio('recorded in the browser', 'opus');
    expect(ogg.subarray(0, 4).toString('latin1')).to.equal('OggS');
    const chat = await newChat(owner, { model: 'sim-transcribe' });
    const file = await owner.json('POST', `/api/playground/chats/${chat.id}/files`, { filename: 'recording.ogg', content_type: 'audio/ogg', data: ogg.toString('base64') });
    const sent = await owner.json('POST', `/api/playground/chats/${chat.id}/transcriptions`, { model: 'sim-transcribe', file_id: file.body.id });
    expect(sent.status).to.equal(202);
    const transcript = (await settledChat(owner, chat.id)).messages[1];
    expect(transcript.content.toLowerCase()).to.include('recorded in the browser');
    expect(transcript.receipt.units.audio_ms).to.be.greaterThan(0);
  });

  it('credits Playground usage to the member who made it, apart from their API usage, in usage and costs by member', async () => {
    const chat = await newChat(third, { model: 'sim-tts' });
    await third.json('POST', `/api/playground/chats/${chat.id}/speech`, { model: 'sim-tts', voice: 'nova', input: 'Theo speaks' });
    await settledChat(third, chat.id);
    const video = await newChat(third, { model: 'sim-video' });
    const job = (await third.json('POST', `/api/playground/chats/${video.id}/videos`, { model: 'sim-video', prompt: 'x', duration: 2, resolution: '360p' })).body.job.id;
    await gateway.runtime.temporal.client.workflow.getHandle(job).result();

    const db = gateway.runtime.db;
    const ownerId = (await owner.json('GET', '/api/me')).body.user.id;
    const recorded = await db('usage_records').where({ user_id: third.userId }).select('request_id', 'endpoint', 'api_key_id');
    expect(recorded.map((r: any) => r.endpoint).sort()).to.deep.equal(['audio.speech', 'videos.generations']);
    expect(recorded.every((r: any) => r.api_key_id === null)).to.equal(true);
    const spent = async (requestIds: string[]) => -Number((await db('credit_ledger').whereIn('request_id', requestIds).where({ kind: 'settle' }).sum({ total: 'amount_micro' }).first())?.total ?? 0);
    const ownersPlayground = await db('usage_records').where({ user_id: ownerId }).pluck('request_id');
    const ownersApi = await db('usage_records as r').join('api_keys as k', 'k.id', 'r.api_key_id').where('k.created_by_user_id', ownerId).pluck('r.request_id');
    expect(ownersPlayground.length).to.be.greaterThan(0);
    expect(ownersApi.length).to.be.greaterThan(0);

    const costs = (await owner.json('GET', '/v1/organization/costs?group_by=user_id')).body.data.flatMap((b: any) => b.results);
    const cost = (userId: string, source: string) => creditsToMicro(costs.filter((r: any) => r.user_id === userId && r.source === source).reduce((sum: number, r: any) => sum + r.amount.value, 0));
    expect(cost(third.userId, 'playground')).to.equal(await spent(recorded.map((r: any) => r.request_id))).and.to.be.greaterThan(0);
    expect(cost(third.userId, 'api')).to.equal(0);
    expect(cost(ownerId, 'playground')).to.equal(await spent(ownersPlayground));
    expect(cost(ownerId, 'api')).to.equal(await spent(ownersApi));
    expect(costs.filter((r: any) => r.user_id === null)).to.deep.equal([]);

    const usage = (await owner.json('GET', '/v1/organization/usage/completions?group_by=user_id')).body.data.flatMap((b: any) => b.results);
    const requests = (userId: string, source: string) => usage.filter((r: any) => r.user_id === userId && r.source === source).reduce((sum: number, r: any) => sum + r.num_model_requests, 0);
    expect(requests(third.userId, 'playground')).to.equal(2);
    expect(requests(ownerId, 'playground')).to.equal(ownersPlayground.length);
    expect(requests(ownerId, 'api')).to.equal(ownersApi.length);
  });

  /** Speech made through the API with a key of the owner's (a real audio file for the Playground to transcribe). */
  async function spokenAudio(input: string, format: 'wav' | 'opus'): Promise<Buffer> {
    const key = await owner.json('POST', '/v1/organization/api_keys', { name: `speech-${format}`, preset: 'custom' });
    const spoken = await fetch(`${gateway.url}/v1/audio/speech`, {
      method: 'POST', headers: { authorization: `Bearer ${key.body.value}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'sim-tts', voice: 'alloy', input, response_format: format }),
    });
    return Buffer.from(await spoken.arrayBuffer());
  }
});
