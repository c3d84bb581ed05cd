import { expect } from 'chai';
import { InvalidRequestError } from '../../../core/errors';
import { runwayRatio } from '../../../providers/runway/ratio';

describe('runwayRatio', () => {
  it('defaults to landscape 720p', () => {
    expect(runwayRatio('gen4.5', undefined, undefined)).to.equal('1280:720');
  });

  it('maps an aspect ratio within a resolution tier', () => {
    expect(runwayRatio('gen4_turbo', undefined, '9:16')).to.equal('720:1280');
    expect(runwayRatio('gen4_turbo', '720p', '1:1')).to.equal('960:960');
    expect(runwayRatio('veo3.1', '1080p', '16:9')).to.equal('1920:1080');
    expect(runwayRatio('veo3.1', '1080P', '9:16')).to.equal('1080:1920');
  });

  it('passes an explicit pixel size through in Runway notation', () => {
    expect(runwayRatio('gen4_turbo', '1104x832', '16:9')).to.equal('1104:832');
    expect(runwayRatio('gen4_turbo', '1584:672', undefined)).to.equal('1584:672');
  });

  it('uses the 5:3 frames of gen3a_turbo', () => {
    expect(runwayRatio('gen3a_turbo', undefined, '16:9')).to.equal('1280:768');
    expect(runwayRatio('gen3a_turbo', '720p', '9:16')).to.equal('768:1280');
  });

  it('refuses a shape Runway does not render, naming the parameter', () => {
    const badAspect = (() => { try { runwayRatio('gen4.5', '1080p', '4:3'); } catch (err) { return err; } })();
    const badTier = (() => { try { runwayRatio('gen4.5', '4k', '16:9'); } catch (err) { return err; } })();

    expect(badAspect).to.be.instanceOf(InvalidRequestError);
    expect((badAspect as InvalidRequestError).param).to.equal('aspect_ratio');
    expect(badTier).to.be.instanceOf(InvalidRequestError);
    expect((badTier as InvalidRequestError).param).to.equal('resolution');
  });
});
