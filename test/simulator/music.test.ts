import { expect } from 'chai';
import { parseMp3 } from '../../simulator/media/mp3';
import { parseWav } from '../../simulator/media/wav';
import { ctx, simulated } from './support';

describe('simulated provider: music', () => {
  const music = simulated().music!('sim-music');

  it('returns an MP3 track of the requested duration', async () => {
    const result = await music.doGenerate({ prompt: 'lofi beat for studying', durationSeconds: 6, format: 'mp3', params: { seed: 3 } }, ctx());
    expect(result.tracks).to.have.length(1);
    const [track] = result.tracks;
    expect(track.mediaType).to.equal('audio/mpeg');
    expect(track.durationSeconds).to.equal(6);
    const info = parseMp3(track.data)!;
    expect(info.seconds).to.be.closeTo(6, 0.1);
    expect(info.tags.TIT2).to.equal('lofi beat for studying');
  });

  it('returns a WAV track of exactly the requested duration, different per seed', async () => {
    const a = await music.doGenerate({ prompt: 'lofi', durationSeconds: 5, format: 'wav', params: { seed: 1 } }, ctx());
    const b = await music.doGenerate({ prompt: 'lofi', durationSeconds: 5, format: 'wav', params: { seed: 2 } }, ctx());
    expect(a.tracks[0].mediaType).to.equal('audio/wav');
    expect(parseWav(a.tracks[0].data)!.seconds).to.equal(5);
    expect(a.tracks[0].data.equals(b.tracks[0].data)).to.equal(false);
  });
});
