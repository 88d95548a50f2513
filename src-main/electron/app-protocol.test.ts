// app://relay-lab/ against a real renderer folder on disk: the built files
// with the CSP, nothing outside the folder, no link, no other host.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { APP_URL, serveAppRequest } from './app-protocol';
import { ELECTRON_CSP } from './security';

const SECRET = 'SECRET-OUTSIDE-8c2e';

describe('the app:// protocol', () => {
  let base: string;
  let renderer: string;
  beforeAll(() => {
    base = fs.mkdtempSync(path.join(os.tmpdir(), 'relay-lab-app-protocol-'));
    renderer = path.join(base, 'renderer');
    fs.mkdirSync(path.join(renderer, 'assets'), { recursive: true });
    fs.writeFileSync(path.join(renderer, 'index.html'), '<!doctype html><title>Relay Lab</title>');
    fs.writeFileSync(path.join(renderer, 'assets', 'app.js'), 'console.log(1)');
    fs.writeFileSync(path.join(base, 'secret.txt'), SECRET);
    fs.symlinkSync(path.join(base, 'secret.txt'), path.join(renderer, 'assets', 'link.js'));
  });
  afterAll(() => fs.rmSync(base, { recursive: true, force: true }));

  it('serves the page and its assets with the CSP', () => {
    for (const url of [APP_URL, 'app://relay-lab/', 'app://relay-lab/index.html?x=1#y']) {
      const r = serveAppRequest(renderer, url);
      expect(r.status, url).toBe(200);
      expect(String(r.body)).toContain('Relay Lab');
      expect(r.headers['Content-Type']).toBe('text/html; charset=utf-8');
      expect(r.headers['Content-Security-Policy']).toBe(ELECTRON_CSP);
    }
    const js = serveAppRequest(renderer, 'app://relay-lab/assets/app.js');
    expect(js.status).toBe(200);
    expect(js.headers['Content-Type']).toMatch(/^text\/javascript/);
    expect(serveAppRequest(renderer, 'app://relay-lab/assets/app.js', 'HEAD')).toMatchObject({
      status: 200,
      body: '',
    });
  });

  it('refuses paths out of the folder, links, other hosts and schemes, and writes', () => {
    for (const url of [
      'app://relay-lab/../secret.txt',
      'app://relay-lab/%2e%2e/secret.txt',
      'app://relay-lab/assets/%2e%2e%2f%2e%2e%2fsecret.txt',
      'app://relay-lab/..%2fsecret.txt',
      'app://relay-lab/assets/link.js',
      'app://relay-lab/assets/%00app.js',
      'app://relay-lab/assets/',
      'app://relay-lab/missing.js',
      'app://evil/index.html',
      'file:///index.html',
      'not a url',
    ]) {
      const r = serveAppRequest(renderer, url);
      expect(r.status, url).toBeGreaterThanOrEqual(400);
      expect(String(r.body)).not.toContain(SECRET);
    }
    expect(serveAppRequest(renderer, APP_URL, 'POST').status).toBe(405);
  });
});
