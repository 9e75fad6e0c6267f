"""Image filters: box blur, Sobel, separable gaussian, thresholds with masks, normalisation,
gamma, clipping in place, colour conversion, resampling, blending."""
import numpy as np

from xlanb.errors import ConcretizationError, DataDependentShapeError

from . import program


def _img(r, h=8, w=9, dtype=np.float64):
    return r.random((h, w)).astype(dtype)


@program(lambda r: (_img(r),))
def box_blur_3x3(img):
    out = np.zeros_like(img)
    out[1:-1, 1:-1] = (img[:-2, :-2] + img[:-2, 1:-1] + img[:-2, 2:]
                       + img[1:-1, :-2] + img[1:-1, 1:-1] + img[1:-1, 2:]
                       + img[2:, :-2] + img[2:, 1:-1] + img[2:, 2:]) / 9.0
    return out


@program(lambda r: (_img(r), 2))
def box_blur_loops(img, radius):
    h, w = img.shape
    k = 2 * radius + 1
    out = np.zeros((h - k + 1, w - k + 1))
    for dy in range(k):
        for dx in range(k):
            out += img[dy:dy + h - k + 1, dx:dx + w - k + 1]
    out /= k * k
    return out


@program(lambda r: (_img(r),))
def sobel_magnitude(img):
    gx = (img[:-2, 2:] + 2 * img[1:-1, 2:] + img[2:, 2:]
          - img[:-2, :-2] - 2 * img[1:-1, :-2] - img[2:, :-2])
    gy = (img[2:, :-2] + 2 * img[2:, 1:-1] + img[2:, 2:]
          - img[:-2, :-2] - 2 * img[:-2, 1:-1] - img[:-2, 2:])
    return np.hypot(gx, gy), np.arctan2(gy, gx)


@program(lambda r: (_img(r), np.zeros((8, 9))))
def sobel_into_output(img, out):
    kx = np.array([[-1, 0, 1], [-2, 0, 2], [-1, 0, 1]], dtype=float)
    gx = np.zeros((img.shape[0] - 2, img.shape[1] - 2))
    gy = np.zeros_like(gx)
    for i in range(3):
        for j in range(3):
            window = img[i:i + gx.shape[0], j:j + gx.shape[1]]
            gx += kx[i, j] * window
            gy += kx[j, i] * window
    out[1:-1, 1:-1] = np.sqrt(gx ** 2 + gy ** 2)


@program(lambda r: (_img(r, 10, 10), 1.0))
def gaussian_separable(img, sigma):
    x = np.arange(-2, 3)
    kernel = np.exp(-x ** 2 / (2 * sigma ** 2))
    kernel /= kernel.sum()
    tmp = np.zeros((img.shape[0], img.shape[1] - 4))
    for i, w in enumerate(kernel):
        tmp += w * img[:, i:i + tmp.shape[1]]
    out = np.zeros((img.shape[0] - 4, tmp.shape[1]))
    for i, w in enumerate(kernel):
        out += w * tmp[i:i + out.shape[0], :]
    return out


@program(lambda r: (_img(r), 0.5))
def threshold_mask_inplace(img, t):
    img[img < t] = 0.0
    img[img >= t] = 1.0


@program(lambda r: (_img(r), 0.3, 0.7))
def threshold_band_where(img, lo, hi):
    band = (img > lo) & (img < hi)
    return np.where(band, 255, 0).astype(np.uint8), band.sum()


@program(lambda r: (_img(r) * 3 + 1,))
def normalize_minmax_inplace(img):
    img -= img.min()
    img /= img.max()


@program(lambda r: (_img(r), 2.2))
def gamma_correction_out(img, gamma):
    np.power(img, 1.0 / gamma, out=img)
    return img


@program(lambda r: (r.normal(size=(6, 7)), -0.5, 0.5))
def clip_inplace_out(img, lo, hi):
    np.clip(img, lo, hi, out=img)


@program(lambda r: (r.random((5, 6, 3)),))
def rgb_to_gray_matmul(rgb):
    return rgb @ np.array([0.299, 0.587, 0.114])


@program(lambda r: (r.random((5, 6, 3)).astype(np.float32),), n=4)
def rgb_to_gray_channels(rgb):
    r, g, b = rgb[..., 0], rgb[..., 1], rgb[..., 2]
    return 0.2989 * r + 0.5870 * g + 0.1140 * b


@program(lambda r: (r.integers(0, 256, (6, 6)).astype(np.uint8),))
def invert_uint8(img):
    return 255 - img, ~img


@program(lambda r: (r.integers(0, 256, (6, 6)).astype(np.uint8), 40))
def brighten_uint8_saturating(img, delta):
    wide = img.astype(np.int16) + delta
    return np.clip(wide, 0, 255).astype(np.uint8)


@program(lambda r: (_img(r), 1.5))
def unsharp_mask(img, amount):
    blurred = img.copy()
    blurred[1:-1, 1:-1] = (img[:-2, 1:-1] + img[2:, 1:-1] + img[1:-1, :-2]
                           + img[1:-1, 2:] + img[1:-1, 1:-1]) / 5
    img += amount * (img - blurred)
    np.clip(img, 0, 1, out=img)


@program(lambda r: (_img(r, 6, 5),))
def integral_image_loops(img):
    ii = np.zeros((img.shape[0] + 1, img.shape[1] + 1))
    for i in range(img.shape[0]):
        ii[i + 1, 1:] = ii[i, 1:] + img[i]
    for j in range(img.shape[1]):
        ii[:, j + 1] += 0 * ii[:, j]
    for j in range(1, img.shape[1] + 1):
        ii[:, j] += ii[:, j - 1]
    return ii


@program(lambda r: (_img(r, 8, 6),))
def downsample_2x2_mean(img):
    h, w = img.shape
    return img.reshape(h // 2, 2, w // 2, 2).mean(axis=(1, 3))


@program(lambda r: (_img(r, 3, 4),))
def upsample_nearest(img):
    h, w = img.shape
    out = np.empty((2 * h, 2 * w))
    out[::2, ::2] = img
    out[1::2, ::2] = img
    out[::2, 1::2] = img
    out[1::2, 1::2] = img
    return out


@program(lambda r: (_img(r),))
def flip_inplace(img):
    img[:] = img[::-1]
    img[:, :] = img[:, ::-1]


@program(lambda r: (_img(r, 7, 7), 0.8))
def vignette(img, strength):
    h, w = img.shape
    y = np.arange(h)[:, None] - (h - 1) / 2
    x = np.arange(w)[None, :] - (w - 1) / 2
    r2 = (x ** 2 + y ** 2) / ((h / 2) ** 2)
    img *= 1 - strength * r2
    return img


@program(lambda r: (r.random((5, 5, 3)).astype(np.float32),
                    r.random((5, 5, 3)).astype(np.float32),
                    r.random((5, 5, 1)).astype(np.float32)), n=4)
def alpha_blend_inplace(fg, bg, alpha):
    bg *= 1 - alpha
    bg += alpha * fg


@program(lambda r: (r.random((6, 5, 3)) * 200,))
def per_channel_standardize(img):
    img -= img.mean(axis=(0, 1))
    img /= img.std(axis=(0, 1))
    return img


@program(lambda r: (_img(r), 0.5))
def binary_erode(img, t):
    b = img > t
    e = b.copy()
    e[1:-1, 1:-1] = b[1:-1, 1:-1] & b[:-2, 1:-1] & b[2:, 1:-1] & b[1:-1, :-2] & b[1:-1, 2:]
    e[0, :] = e[-1, :] = False
    e[:, 0] = e[:, -1] = False
    return e


@program(lambda r: (_img(r, 6, 6), np.array([[0.0, 1.0, 0.0], [1.0, -4.0, 1.0],
                                             [0.0, 1.0, 0.0]])))
def convolve_valid_loops(img, kern):
    kh, kw = kern.shape
    out = np.empty((img.shape[0] - kh + 1, img.shape[1] - kw + 1))
    for i in range(out.shape[0]):
        for j in range(out.shape[1]):
            out[i, j] = np.sum(img[i:i + kh, j:j + kw] * kern)
    return out


@program(lambda r: (r.random((6, 6)) * 255, 255.0))
def rescale_to_unit_and_quantize(img, vmax):
    scaled = img / vmax
    q = np.floor(scaled * 15.999).astype(np.int64)
    return q, scaled


@program(lambda r: (_img(r), np.zeros((8, 9))))
def local_max_mask(img, out):
    c = img[1:-1, 1:-1]
    peak = (c > img[:-2, 1:-1]) & (c > img[2:, 1:-1]) & (c > img[1:-1, :-2]) & \
        (c > img[1:-1, 2:])
    out[1:-1, 1:-1] = np.where(peak, c, 0.0)
    return peak.sum()


@program(lambda r: (_img(r) * 2,), jit_error=ConcretizationError)
def rescale_if_overexposed(img):
    if img.max() > 1.0:
        img /= img.max()
    return img


@program(lambda r: (_img(r), 0.8), jit_error=DataDependentShapeError)
def bright_pixel_values(img, t):
    return img[img > t], np.where(img > t)


@program(lambda r: (r.integers(0, 4, (5, 5)),), jit_error=DataDependentShapeError)
def label_count_unique(labels):
    values = np.unique(labels)
    return values, len(values)
