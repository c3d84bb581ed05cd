import { expect } from 'chai';
import { loadCatalogFiles } from '../../catalog/load';
import {
  chatCost, creditsToMicro, embeddingCost, estimateChatReservation, estimateSpeechReservation, formatCredits, imageCost, musicCost,
  speechCost, transcriptionCost, videoCost, atKeyFee,
} from '../../catalog/pricing';
import type { ModelRecord } from '../../catalog/types';
import { InternalError } from '../../core/errors';

describe('pricing', () => {
  const bySlug = new Map(loadCatalogFiles().map((r) => [r.slug, r]));
  const model = (slug: string) => bySlug.get(slug)!;

  describe('creditsToMicro', () => {
    it('converts decimal credits exactly', () => {
      expect(creditsToMicro(2.5)).to.equal(2_500_000n);
      expect(creditsToMicro(13.3)).to.equal(13_300_000n);
      expect(creditsToMicro(0.003084)).to.equal(3084n);
      expect(creditsToMicro(127.402)).to.equal(127_402_000n);
      expect(creditsToMicro(0.000001)).to.equal(1n);
      expect(creditsToMicro(3e21)).to.equal(3n * 10n ** 27n);
    });

    it('refuses amounts finer than a micro-credit or not a price', () => {
      expect(() => creditsToMicro(0.0000001)).to.throw(RangeError);
      expect(() => creditsToMicro(1.0000005)).to.throw(RangeError);
      expect(() => creditsToMicro(-1)).to.throw(RangeError);
      expect(() => creditsToMicro(Number.NaN)).to.throw(RangeError);
    });
  });

  describe('formatCredits', () => {
    it('gives the exact decimal credits of a micro-credit amount', () => {
      expect(formatCredits(1234)).to.equal(0.001234);
      expect(formatCredits(0)).to.equal(0);
      expect(formatCredits(2_500_000)).to.equal(2.5);
      expect(formatCredits(123_456_789_012n)).to.equal(123456.789012);
      expect(formatCredits(-750_000)).to.equal(-0.75);
    });
  });

  describe('chatCost and embeddingCost', () => {
    it('charges input and output tokens at their per-1M list prices', () => {
      // gpt-4o: $2.50 / $10 per 1M tokens -> 1000 in = 0.25 credits, 500 out = 0.5 credits.
      expect(chatCost(model('gpt-4o'), { inputTokens: 1000, outputTokens: 500 })).to.equal(750_000);
      expect(embeddingCost(model('text-embedding-3-small'), { inputTokens: 1_000_000 })).to.equal(2_000_000);
    });

    it('rounds up to the next micro-credit, once per charge', () => {
      const lite = model('gemini-2.0-flash-lite'); // 7.5 credits per 1M input tokens: 7.5 µcr a token
      expect(chatCost(lite, { inputTokens: 1, outputTokens: 0 })).to.equal(8);
      expect(chatCost(lite, { inputTokens: 3, outputTokens: 0 })).to.equal(23);
      expect(3 * chatCost(lite, { inputTokens: 1 })).to.equal(24);
    });

    it('makes many small charges add up to the charge of their sum when per-token rates are whole', () => {
      const gpt4o = model('gpt-4o');
      let sum = 0;
      for (let i = 0; i < 1000; i++) sum += chatCost(gpt4o, { inputTokens: 13, outputTokens: 7 });
      expect(sum).to.equal(chatCost(gpt4o, { inputTokens: 13_000, outputTokens: 7000 }));
    });

    it('refuses token counts that are not non-negative integers', () => {
      expect(() => chatCost(model('gpt-4o'), { inputTokens: -1 })).to.throw(RangeError);
      expect(() => chatCost(model('gpt-4o'), { inputTokens: 1.5 })).to.throw(RangeError);
    });

    it('returns safe integers even for large usage', () => {
      const cost = chatCost(model('o1'), { inputTokens: 10_000_000_000, outputTokens: 10_000_000_000 });
      expect(Number.isSafeInteger(cost)).to.equal(true);
      expect(cost).to.equal(75_000_000 * 1_000_000); // 10B tokens each way at $15 / $60 per 1M
    });
  });

  describe('estimateChatReservation', () => {
    it('reserves the prompt plus max_tokens', () => {
      expect(estimateChatReservation(model('gpt-4o'), { promptTokens: 1000, maxTokens: 100 })).to.equal(1000 * 250 + 100 * 1000);
    });

    it('assumes min(maxOutputTokens, 4096) output tokens without max_tokens', () => {
      expect(estimateChatReservation(model('gpt-4o'), { promptTokens: 1000 })).to.equal(1000 * 250 + 4096 * 1000);
      const shortAnswers: ModelRecord = { ...model('sim-chat'), maxOutputTokens: 1000 };
      expect(estimateChatReservation(shortAnswers, { promptTokens: 0 })).to.equal(1000 * 30);
    });

    it('estimates the prompt from characters and caps max_tokens at the model limit', () => {
      expect(estimateChatReservation(model('sim-chat'), { promptChars: 10, maxTokens: 0 })).to.equal(4 * 10);
      expect(estimateChatReservation(model('claude-3-haiku'), { promptTokens: 0, maxTokens: 100_000 })).to.equal(4096 * 125);
    });
  });

  describe('imageCost', () => {
    it('prices per image by quality and size, times n', () => {
      expect(imageCost(model('dall-e-3'), { quality: 'hd', size: '1792x1024', n: 1 })).to.equal(12_000_000);
      expect(imageCost(model('dall-e-3'), { quality: 'standard', size: '1024x1024' })).to.equal(4_000_000);
      expect(imageCost(model('dall-e-2'), { size: '256x256', n: 10 })).to.equal(16_000_000);
      expect(imageCost(model('gpt-image-1'), { quality: 'low', size: '1024x1536', n: 3 })).to.equal(4_800_000);
    });

    it('follows the wildcard lookup order q:s, q:*, *:s, *:*', () => {
      const record: ModelRecord = {
        ...model('sim-image'),
        pricing: { perImage: { 'hd:1024x1024': 5, 'hd:*': 4, '*:1024x1024': 3, '*:*': 2 } },
      };
      expect(imageCost(record, { quality: 'hd', size: '1024x1024' })).to.equal(5_000_000);
      expect(imageCost(record, { quality: 'hd', size: '512x512' })).to.equal(4_000_000);
      expect(imageCost(record, { quality: 'standard', size: '1024x1024' })).to.equal(3_000_000);
      expect(imageCost(record, { quality: 'standard', size: '512x512' })).to.equal(2_000_000);
    });

    it('prices GPT Image auto quality and size at the most the upstream may bill', () => {
      expect(imageCost(model('gpt-image-1'), { quality: 'auto', size: 'auto' })).to.equal(25_000_000);
      expect(imageCost(model('gpt-image-1'), { quality: 'auto', size: '1024x1024' })).to.equal(16_700_000);
    });

    it('uses image_size for models priced by output resolution', () => {
      expect(imageCost(model('gemini-3-pro-image-preview'), { image_size: '4K' })).to.equal(24_000_000);
      expect(imageCost(model('gemini-3-pro-image-preview'), { image_size: '2K' })).to.equal(13_400_000);
    });

    it('fails loudly when a record has no matching price', () => {
      const record: ModelRecord = { ...model('dall-e-2'), pricing: { perImage: { '*:256x256': 1 } } };
      expect(() => imageCost(record, { size: '1024x1024' })).to.throw(InternalError, /no image price/);
    });
  });

  describe('speech, transcription, video and music', () => {
    it('prices speech per 1M characters, additively', () => {
      const tts = model('tts-1'); // $15 per 1M characters
      expect(speechCost(tts, { characters: 1000 })).to.equal(1_500_000);
      let sum = 0;
      for (let i = 0; i < 100; i++) sum += speechCost(tts, { characters: 10 });
      expect(sum).to.equal(speechCost(tts, { characters: 1000 }));
    });

    it('prices per-second voices by the produced audio, to the millisecond, rounded up', () => {
      const miniTts = model('gpt-4o-mini-tts'); // 0.025 credits a second
      expect(speechCost(miniTts, { characters: 500, seconds: 10 })).to.equal(250_000);
      expect(speechCost(miniTts, { characters: 1, seconds: 1.5 })).to.equal(37_500);
      expect(speechCost(miniTts, { characters: 1, seconds: 0.0001 })).to.equal(25);
      expect(() => speechCost(miniTts, { characters: 1 })).to.throw(InternalError);
    });

    it('reserves speech exactly per character, or by an over-estimated length', () => {
      expect(estimateSpeechReservation(model('tts-1'), { characters: 1000 })).to.equal(1_500_000);
      expect(estimateSpeechReservation(model('gpt-4o-mini-tts'), { characters: 120 })).to.equal(250_000);
      expect(estimateSpeechReservation(model('gpt-4o-mini-tts'), { characters: 120, speed: 2 })).to.equal(125_000);
    });

    it('prices transcription per second of audio', () => {
      expect(transcriptionCost(model('whisper-1'), { seconds: 60 })).to.equal(600_000); // $0.006 a minute
      expect(transcriptionCost(model('whisper-large-v3'), { seconds: 3600 })).to.equal(11_102_400); // >= $0.111 an hour
      expect(transcriptionCost(model('whisper-1'), { seconds: 0.0005 })).to.equal(10);
      let sum = 0;
      for (let i = 0; i < 60; i++) sum += transcriptionCost(model('whisper-1'), { seconds: 1 });
      expect(sum).to.equal(transcriptionCost(model('whisper-1'), { seconds: 60 }));
    });

    it('prices video per second by resolution, times n', () => {
      expect(videoCost(model('sora-2'), { seconds: 8, resolution: '720p' })).to.equal(80_000_000);
      expect(videoCost(model('sora-2-pro'), { seconds: 4, resolution: '1024p' })).to.equal(200_000_000);
      expect(videoCost(model('sora-2-pro'), { seconds: 4, resolution: '720p' })).to.equal(120_000_000);
      expect(videoCost(model('ray-2'), { seconds: 5, resolution: '720p' })).to.equal(70_780_000);
      expect(videoCost(model('sim-video'), { seconds: 4, resolution: '360p', n: 2 })).to.equal(4_000_000);
      expect(videoCost(model('veo-3.0-generate-001'), { seconds: 8 })).to.equal(320_000_000);
    });

    it('prices music per track plus per second, per track', () => {
      expect(musicCost(model('sim-music'), { seconds: 30 })).to.equal(1_600_000);
      expect(musicCost(model('sim-music'), { seconds: 30, n: 2 })).to.equal(3_200_000);
      expect(musicCost(model('stable-audio-2.5'), { seconds: 190 })).to.equal(20_000_000);
    });
  });

  describe("a workspace's own key (the BYOK fee)", () => {
    it('charges the fee share of every kind of price, rounded up once', () => {
      const chat = model('gpt-4o-mini');
      // 30 x 15 + 8 x 60 = 930 µcr at list price.
      expect(chatCost(chat, { inputTokens: 30, outputTokens: 8 })).to.equal(930);
      expect(chatCost(atKeyFee(chat, 1000), { inputTokens: 30, outputTokens: 8 })).to.equal(93);
      expect(chatCost(atKeyFee(chat, 250), { inputTokens: 30, outputTokens: 8 })).to.equal(24); // 23.25 rounds up
      expect(chatCost(atKeyFee(chat, 0), { inputTokens: 30, outputTokens: 8 })).to.equal(0);
      expect(chatCost(atKeyFee(chat, 10_000), { inputTokens: 30, outputTokens: 8 })).to.equal(930);
      expect(estimateChatReservation(atKeyFee(chat, 1000), { promptTokens: 30, maxTokens: 8 })).to.equal(93);
      expect(imageCost(atKeyFee(model('dall-e-3'), 500), { quality: 'hd', size: '1792x1024', n: 1 })).to.equal(600_000);
      for (const slug of ['sim-video', 'sim-music', 'sim-tts', 'sim-transcribe']) {
        const record = model(slug);
        const full = record.modality === 'video' ? videoCost(record, { seconds: 3, n: 2 })
          : record.modality === 'music' ? musicCost(record, { seconds: 7 })
            : record.modality === 'speech' ? speechCost(record, { characters: 1234, seconds: 3 })
              : transcriptionCost(record, { seconds: 12.5 });
        const half = record.modality === 'video' ? videoCost(atKeyFee(record, 5000), { seconds: 3, n: 2 })
          : record.modality === 'music' ? musicCost(atKeyFee(record, 5000), { seconds: 7 })
            : record.modality === 'speech' ? speechCost(atKeyFee(record, 5000), { characters: 1234, seconds: 3 })
              : transcriptionCost(atKeyFee(record, 5000), { seconds: 12.5 });
        expect(full, slug).to.be.greaterThan(1);
        expect(half, slug).to.be.within(Math.floor(full / 2), Math.ceil(full / 2) + 1);
      }
    });
  });
});
