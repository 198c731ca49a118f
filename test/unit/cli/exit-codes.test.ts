import { EXIT, EXIT_CODE_HELP, exitCodeForStatus, mostSevere } from '../../../src/cli/exit-codes';

describe('exitCodeForStatus', () => {
  test.each([
    [200, EXIT.OK],
    [204, EXIT.OK],
    [400, EXIT.INPUT_REJECTED],
    [413, EXIT.INPUT_REJECTED],
    [415, EXIT.INPUT_REJECTED],
    [401, EXIT.AUTH_REFUSED],
    [403, EXIT.AUTH_REFUSED],
    [408, EXIT.SERVER_ERROR],
    [500, EXIT.SERVER_ERROR],
    [502, EXIT.SERVER_ERROR],
    [503, EXIT.SERVER_ERROR],
    [404, EXIT.SERVER_ERROR],
    [301, EXIT.SERVER_ERROR],
  ])('When the server answers %i, then the exit code is %i', (status, code) => {
    expect(exitCodeForStatus(status)).toBe(code);
  });
});

describe('mostSevere', () => {
  test('When failures mix, then unreachable > auth refused > server error > input rejected > ok', () => {
    const order = [EXIT.OK, EXIT.INPUT_REJECTED, EXIT.SERVER_ERROR, EXIT.AUTH_REFUSED, EXIT.UNREACHABLE];
    for (let i = 0; i < order.length; i++) {
      for (let j = 0; j < order.length; j++) {
        const a = order[i];
        const b = order[j];
        expect(mostSevere(a, b)).toBe(order[Math.max(i, j)]);
      }
    }
  });
});

test('the help text lists every exit code of the table', () => {
  for (const code of Object.values(EXIT)) expect(EXIT_CODE_HELP).toMatch(new RegExp(`^  ${code}  \\S`, 'm'));
});
