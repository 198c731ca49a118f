import { compileLineParser } from '../../../src/cli/line-parser';
import { TemplateError } from '../../../src/domain/template';

describe('compileLineParser (--parse)', () => {
  it('When the template has \\t or \\\\, then it is a tab or a backslash, and splits the line there', () => {
    expect(compileLineParser('{{artist}}\\\\{{title}}')('A\\B')).toEqual({ artist: 'A', title: 'B' });
    expect(compileLineParser('{{artist}}\\t{{title}}')('Daft Punk\tOne More Time')).toEqual({ artist: 'Daft Punk', title: 'One More Time' });
  });

  it('When literal text separates fields, then the first separator splits and the last field takes the rest', () => {
    const parse = compileLineParser('{{artist}} - {{title}} ({{album}})');
    expect(parse('A - B - C (D)')).toEqual({ artist: 'A', title: 'B - C', album: 'D' });
    expect(parse('no separators')).toBeNull();
  });

  it('When a field comes out empty, then it is left out', () => {
    expect(compileLineParser('{{artist}}\\t{{title}}\\t{{album}}')('A\tB\t')).toEqual({ artist: 'A', title: 'B' });
  });

  it('When two fields touch, or no field is known, then the template is refused', () => {
    expect(() => compileLineParser('{{artist}}{{title}}')).toThrow(TemplateError);
    expect(() => compileLineParser('{{foo}}\\t{{bar}}')).toThrow(/names no field svc knows/);
  });
});
