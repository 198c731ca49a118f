import { closestName, editDistance, withArticle } from '../../../src/domain/edit-distance';

describe('did you mean', () => {
  test('When a name is one or two edits from a candidate, then that candidate is suggested; when far from all, then none', () => {
    expect(editDistance('kitten', 'sitting')).toBe(3);
    expect(closestName('prot', ['port', 'host', 'secret'])).toBe('port');
    expect(closestName('maxConection', ['maxConnections', 'maxFields'])).toBe('maxConnections');
    expect(closestName('HomeAsistant', ['homeAssistant', 'topic'])).toBe('homeAssistant');
    expect(closestName('zzzzzz', ['port', 'host'])).toBeUndefined();
  });

  test('When a noun is written after "a", then the article follows the sound: an array, an mqtt output, a number', () => {
    expect(withArticle('array')).toBe('an array');
    expect(withArticle('object')).toBe('an object');
    expect(withArticle('mqtt')).toBe('an mqtt');
    expect(withArticle('number')).toBe('a number');
    expect(withArticle('webhook')).toBe('a webhook');
  });
});
