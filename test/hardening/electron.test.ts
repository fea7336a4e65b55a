import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { _electron as electron, type ElectronApplication } from 'playwright-core';
import ts from 'typescript';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { REPO_ROOT, startStudio, type TestStudio } from '../helpers/studio';

/**
 * The desktop window's security settings, read from the source with the TypeScript parser (the
 * Electron binary cannot be downloaded everywhere), the CSP the server sends with the page, and —
 * where Electron runs — the live window.
 */
const source = (path: string) =>
  ts.createSourceFile(path, readFileSync(join(REPO_ROOT, path), 'utf8'), ts.ScriptTarget.Latest, true);

function find<T extends ts.Node>(node: ts.Node, test: (n: ts.Node) => n is T): T[] {
  const out: T[] = [];
  const visit = (n: ts.Node) => {
    if (test(n)) out.push(n);
    n.forEachChild(visit);
  };
  visit(node);
  return out;
}

/** Property name → initializer text of an object literal. */
function properties(literal: ts.ObjectLiteralExpression): Record<string, string> {
  const out: Record<string, string> = {};
  for (const p of literal.properties) {
    if (ts.isPropertyAssignment(p)) out[p.name.getText()] = p.initializer.getText();
    else if (ts.isShorthandPropertyAssignment(p)) out[p.name.getText()] = p.name.getText();
    else if (ts.isSpreadAssignment(p)) out[`...${p.expression.getText()}`] = 'spread';
  }
  return out;
}

describe('src/main/window.ts, parsed', () => {
  const file = source('src/main/window.ts');
  const windows = find(file, ts.isNewExpression).filter((n) => n.expression.getText() === 'BrowserWindow');

  it('creates exactly one BrowserWindow, isolated, sandboxed, without Node in the page', () => {
    expect(windows).toHaveLength(1);
    const options = windows[0]!.arguments?.[0];
    expect(options && ts.isObjectLiteralExpression(options)).toBe(true);
    const top = properties(options as ts.ObjectLiteralExpression);
    const prefsNode = (options as ts.ObjectLiteralExpression).properties.find(
      (p): p is ts.PropertyAssignment => ts.isPropertyAssignment(p) && p.name.getText() === 'webPreferences',
    );
    expect(prefsNode && ts.isObjectLiteralExpression(prefsNode.initializer)).toBe(true);
    const prefs = properties(prefsNode!.initializer as ts.ObjectLiteralExpression);
    expect(prefs).toMatchObject({
      contextIsolation: 'true',
      sandbox: 'true',
      nodeIntegration: 'false',
      webSecurity: 'true',
      preload: 'preload',
    });
    // Nothing that would reopen what the four flags close, and no spread that could override them.
    for (const risky of [
      'nodeIntegrationInWorker',
      'nodeIntegrationInSubFrames',
      'allowRunningInsecureContent',
      'webviewTag',
      'experimentalFeatures',
      'enableBlinkFeatures',
      'enableRemoteModule',
    ]) {
      expect(prefs[risky] ?? 'false', risky).toBe('false');
    }
    expect(Object.keys(prefs).filter((k) => k.startsWith('...'))).toEqual([]);
    expect(Object.keys(top).filter((k) => k.startsWith('...') && !k.includes('icon'))).toEqual([]);
  });

  it('blocks navigation away from the studio origin and denies every new window', () => {
    const calls = find(file, ts.isCallExpression);
    const on = (event: string) =>
      calls.filter(
        (c) =>
          c.expression.getText().endsWith('.on') &&
          ts.isStringLiteral(c.arguments[0]!) &&
          (c.arguments[0] as ts.StringLiteral).text === event,
      );
    for (const event of ['will-navigate', 'will-redirect']) {
      const handlers = on(event);
      expect(handlers, event).toHaveLength(1);
      const body = handlers[0]!.arguments[1]!.getText();
      expect(body, event).toMatch(/isSameOrigin\(target, origin\)/);
      expect(body, event).toMatch(/event\.preventDefault\(\)/);
    }
    const openHandlers = calls.filter((c) => c.expression.getText().endsWith('.setWindowOpenHandler'));
    expect(openHandlers).toHaveLength(1);
    const returns = find(openHandlers[0]!, ts.isReturnStatement).map((r) => r.expression?.getText());
    expect(returns).toEqual(["{ action: 'deny' }"]);
    const permission = calls.filter((c) => c.expression.getText().endsWith('.setPermissionRequestHandler'));
    expect(permission).toHaveLength(1);
    expect(permission[0]!.getText()).toContain('isAllowedPermission(permission)');
  });

  it('binds the studio server to 127.0.0.1 with a fresh 32-byte token', () => {
    const main = readFileSync(join(REPO_ROOT, 'src/main/index.ts'), 'utf8');
    expect(main).toMatch(/listen\([^)]*'127\.0\.0\.1'\)/);
    expect(main).toMatch(/randomBytes\(32\)/);
  });
});

describe('the Content-Security-Policy sent with the studio page', () => {
  let studio: TestStudio;
  let rendererDir: string;

  beforeAll(async () => {
    rendererDir = mkdtempSync(join(tmpdir(), 'kbs-csp-'));
    writeFileSync(
      join(rendererDir, 'index.html'),
      '<!doctype html><html><head><script type="module" src="./assets/app.js"></script></head><body></body></html>',
    );
    studio = await startStudio({ rendererDir });
  });
  afterAll(async () => {
    await studio.close();
    rmSync(rendererDir, { recursive: true, force: true });
  });

  const directives = (header: string | null) =>
    Object.fromEntries(
      (header ?? '')
        .split(';')
        .map((d) => d.trim().split(/\s+/))
        .filter((d) => d[0])
        .map(([name, ...values]) => [name!, values]),
    );

  it.each(['/', '/listings/lst_x/documents'])(
    'on %s: same-origin scripts only, no framing, no plugins',
    async (path) => {
      const res = await fetch(studio.url + path);
      expect(res.status).toBe(200);
      const csp = directives(res.headers.get('content-security-policy'));
      expect(csp['default-src']).toEqual(["'self'"]);
      expect(csp['script-src']).toEqual(["'self'"]);
      expect(csp['connect-src']).toEqual(["'self'"]);
      expect(csp['object-src']).toEqual(["'none'"]);
      expect(csp['base-uri']).toEqual(["'none'"]);
      expect(csp['frame-ancestors']).toEqual(["'none'"]);
      expect(csp['form-action']).toEqual(["'self'"]);
      // Only styles may be inline (Mantine); nothing may be eval'd or loaded from elsewhere.
      const all = Object.entries(csp).flatMap(([name, values]) => values.map((v: string) => `${name} ${v}`));
      expect(all.filter((d) => /unsafe-(eval|hashes)|wasm-unsafe|\*|https?:|ws:/.test(d))).toEqual([]);
      expect(all.filter((d) => d.includes("'unsafe-inline'"))).toEqual(["style-src 'unsafe-inline'"]);
      expect(res.headers.get('x-content-type-options')).toBe('nosniff');
      expect(res.headers.get('cache-control')).toBe('no-store');
    },
  );
});

/** Where the Electron binary is installed (its postinstall cannot always download it). */
function electronBinary(): { path?: string; missing?: string } {
  const pkg = join(REPO_ROOT, 'node_modules', 'electron');
  const pathTxt = join(pkg, 'path.txt');
  if (!existsSync(pathTxt))
    return { missing: `${pathTxt} is absent (electron's postinstall did not download it)` };
  const path = join(pkg, 'dist', readFileSync(pathTxt, 'utf8').trim());
  return existsSync(path) ? { path } : { missing: `${path} is absent` };
}

describe('the live Electron window', () => {
  const binary = electronBinary();
  const built = existsSync(join(REPO_ROOT, 'out', 'main', 'index.js'));
  const skip = binary.missing
    ? `the Electron binary is missing: ${binary.missing}`
    : built
      ? undefined
      : 'out/main is not built (run `npm run build`)';
  if (skip)
    console.warn(`Skipping the live Electron security check: ${skip}. The static checks above still ran.`);
  let app: ElectronApplication | undefined;
  let dataDir: string | undefined;

  afterAll(async () => {
    await app?.close();
    if (dataDir) rmSync(dataDir, { recursive: true, force: true });
  });

  it.skipIf(skip !== undefined)(
    'has an isolated, sandboxed page without Node, that cannot navigate away or open windows',
    async () => {
      dataDir = mkdtempSync(join(tmpdir(), 'kbs-electron-hardening-'));
      app = await electron.launch({
        executablePath: binary.path!,
        args: [REPO_ROOT, ...(process.getuid?.() === 0 ? ['--no-sandbox'] : [])],
        env: { ...process.env, KBSTUDIO_DATA_DIR: dataDir },
        timeout: 60_000,
      });
      const page = await app.firstWindow();
      await page.waitForLoadState('domcontentloaded');
      const studioUrl = page.url();
      const prefs = await app.evaluate(({ BrowserWindow }) => {
        const contents = BrowserWindow.getAllWindows()[0]!.webContents as unknown as {
          getLastWebPreferences?: () => Record<string, unknown>;
        };
        return contents.getLastWebPreferences?.() ?? null;
      });
      if (prefs) {
        expect(prefs).toMatchObject({ contextIsolation: true, sandbox: true, nodeIntegration: false });
      }
      expect(await page.evaluate('window.kbstudio.isolation')).toEqual({
        sandboxed: true,
        contextIsolated: true,
      });
      expect(await page.evaluate('[typeof require, typeof process, typeof module]')).toEqual([
        'undefined',
        'undefined',
        'undefined',
      ]);
      expect(await page.evaluate("window.open('https://example.com/') === null")).toBe(true);
      await page.evaluate("location.href = 'file:///etc/passwd'").catch(() => undefined);
      await page.waitForTimeout(500);
      expect(page.url()).toBe(studioUrl);
      expect(await app.evaluate(({ BrowserWindow }) => BrowserWindow.getAllWindows().length)).toBe(1);
    },
    120_000,
  );
});
