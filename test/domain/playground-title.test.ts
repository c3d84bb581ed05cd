/** A chat's automatic title from its first prompt, without a model: the first sentence as read, short. */
import { expect } from 'chai';
import { titleFrom } from '../../domain/playground';

describe('domain: automatic Playground chat titles', () => {
  const cases: Array<[string, string | null]> = [
    ['Explain **durable** runs', 'Explain durable runs'],
    ['Explain durable runs. Then say why they matter.', 'Explain durable runs'],
    ['## How do I **bold** `code` in [docs](http://x)? And more.', 'How do I bold code in…'],
    ['Show **bold** text and `inline code`, please, with a long question', 'Show bold text and inline code…'],
    ['What is a hold?\nIt is money set aside.', 'What is a hold?'],
    ['> quoted *words* here\n\nrest', 'quoted words here'],
    ['- first item\n- second item', 'first item'],
    ['```js\nconst answer = 42;\n```', 'const answer = 42'],
    ['Supercalifragilisticexpialidocious-antidisestablishmentarianism-pneumono words', 'Supercalifragilisticexpialidocious-antidisestabl…'],
    ['   ', null],
  ];
  for (const [prompt, title] of cases) {
    it(`${JSON.stringify(prompt)} -> ${JSON.stringify(title)}`, () => {
      expect(titleFrom(prompt)).to.equal(title);
      if (title) expect(title.length).to.be.at.most(49);
    });
  }
});
