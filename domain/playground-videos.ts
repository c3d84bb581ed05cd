/**
 * A Playground video message follows its durable job. When the job ends, the message is finished: on
 * success the job's videos are copied into Playground files of the chat (so the video lives, is read and is
 * counted with the chat like every other generation), on failure it carries the job's error. The job's
 * workflow reports its end here (through an activity), so no page needs to be open; reading the chat does
 * the same for a job whose report has not arrived. Either caller may come first or twice: the message row
 * is locked, and a message no longer running is left as it is.
 */
import type { Knex } from 'knex';
import type { ObjectStorage } from '../infra/storage';
import { addFile, finishMessage } from './playground';
import { findVideoJob } from './video-jobs';

export type VideoMessageOutcome = 'finished' | 'already_finished' | 'job_running' | 'no_message';

/** Finishes the running Playground message of video job `jobId` if the job has ended. */
export async function finishVideoMessage(db: Knex, storage: ObjectStorage, jobId: string): Promise<VideoMessageOutcome> {
  return db.transaction(async (trx) => {
    const message = await trx('playground_messages').where({ request_id: jobId, kind: 'video' }).forUpdate().first('id', 'chat_id', 'status', 'user_id');
    if (!message) return 'no_message';
    if (message.status !== 'running') return 'already_finished';
    const chat = await trx('playground_chats').where({ id: message.chat_id }).first('workspace_id');
    const job = await findVideoJob(trx, chat.workspace_id, jobId);
    if (!job) {
      await finishMessage(trx, message.id, { status: 'failed', error: 'The video job no longer exists.' });
      return 'finished';
    }
    if (job.status === 'queued' || job.status === 'processing') return 'job_running';
    const files: string[] = [];
    if (job.status === 'succeeded') {
      for (const [i, video] of job.videos.entries()) {
        // One id per video of the job: a copy cut short and done again writes the same object.
        const file = await addFile(trx, {
          id: `pgf_${jobId.replace(/^vgen_/, '')}v${i}`, chatId: message.chat_id, workspaceId: chat.workspace_id, userId: message.user_id,
          filename: `video-${i + 1}.${video.contentType === 'video/webm' ? 'webm' : 'mp4'}`, contentType: video.contentType, bytes: video.bytes,
        });
        await storage.putStream(file.storageKey, (await storage.get(video.storageKey)).body, { contentType: video.contentType });
        files.push(file.id);
      }
    }
    await finishMessage(trx, message.id, {
      status: job.status === 'succeeded' ? 'completed' : 'failed',
      content: job.status === 'succeeded' ? `${files.length} video${files.length === 1 ? '' : 's'}` : '',
      files, error: job.error?.message ?? null, errorCode: job.error?.code ?? null,
    });
    return 'finished';
  });
}
