import { readSubmissions, type InputItem } from '../../../src/cli/submission-input';

async function read(text: string): Promise<InputItem[]> {
  async function* lines() {
    for (const line of text.split('\n')) yield line;
  }
  const items: InputItem[] = [];
  for await (const item of readSubmissions(lines())) items.push(item);
  return items;
}

describe('readSubmissions', () => {
  test('When the input is NDJSON with blank and bad lines, then each line is judged on its own with its number', async () => {
    const items = await read('{"artist":"A"}\n\n{"artist":\n[1]\n"text"\nnull\n{"title":"T"}');
    expect(items).toEqual([
      { line: 1, fields: { artist: 'A' } },
      { line: 3, error: expect.stringMatching(/^invalid JSON: /) },
      { line: 4, error: 'expected a JSON object, got an array' },
      { line: 5, error: 'expected a JSON object, got a string' },
      { line: 6, error: 'expected a JSON object, got null' },
      { line: 7, fields: { title: 'T' } },
    ]);
  });

  test('When the input is one pretty-printed object, then it is one submission numbered by its first line', async () => {
    expect(await read('\n{\n  "artist": "A",\n  "title": "T"\n}\n')).toEqual([{ line: 2, fields: { artist: 'A', title: 'T' } }]);
  });

  test('When the first line is broken and the whole is no document either, then every line is judged', async () => {
    expect(await read('{"artist": x\n{"artist":"B"}\n\n{"artist":"C"}')).toEqual([
      { line: 1, error: expect.stringMatching(/^invalid JSON/) },
      { line: 2, fields: { artist: 'B' } },
      { line: 4, fields: { artist: 'C' } },
    ]);
  });

  test('When the input is empty or blank, then there is nothing', async () => {
    expect(await read('')).toEqual([]);
    expect(await read('\n  \n')).toEqual([]);
  });

  test('When the whole input is one array, then it is one error', async () => {
    expect(await read('[\n{"artist":"A"}\n]')).toEqual([{ line: 1, error: 'expected a JSON object, got an array' }]);
  });
});
